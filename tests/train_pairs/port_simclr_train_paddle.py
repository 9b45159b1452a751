"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a tiny SimCLR step
(contrastive pre-training of a small conv encoder), 3 steps, one batch of two augmented views
per step.

    SimCLR: registers projector (ProjectionHead) first, then encoder (Encoder); forward(x) runs
        the encoder on the 2B views stacked along the batch ([view 1 of every image; view 2 of
        every image]) and the projector on its features, and returns z [2B, 8] (not normalised)
    Encoder: conv1 (Conv2D 3 -> 8, 3x3, padding 1, no bias), bn1 (BatchNorm2D, momentum 0.9),
        conv2 (Conv2D 8 -> 16, 3x3, stride 2, padding 1, no bias), bn2; F.relu after each bn
        (functional), global average pooling as paddle.mean(axis=[2, 3]) (functional) -> h [2B, 16]
    ProjectionHead: fc1 (Linear 16 -> 32, no bias), bn (BatchNorm1D 32), F.relu, dropout
        (Dropout 0.1), fc2 (Linear 32 -> 8, with bias)
Batch: 8 images of 3x12x12 per step, so BatchNorm sees 16 samples; model.train() (batch
statistics, dropout on).

Views: inputs(step) draws the images and every augmentation parameter from
numpy default_rng(5500 + step) (no framework RNG): per image and view a 10x10 crop offset
(0..2, 0..2), a horizontal flip flag, a per-channel contrast factor U(0.6, 1.4) and offset
U(-0.3, 0.3) (colour jitter), and Gaussian noise N(0, 0.05) [2, 8, 3, 10, 10]. The crops, flips
and jitter are applied with paddle ops (slicing, paddle.flip, x * c + o, + noise); the two views
are concatenated: x [16, 3, 10, 10].
Loss: NT-Xent (the SimCLR contrastive loss), temperature 0.2, written the "info_nce" way:
F.normalize(z), sim = z z^T / T, the diagonal (self-similarity) replaced by -1e9, F.cross_entropy
(mean) with the positive of row i at column (i + B) mod 2B.
Optimizer: Momentum(learning_rate 0.05, momentum 0.9, use_nesterov=True) with two parameter groups:
conv / linear weights (ndim >= 2) with weight_decay 5e-4, BatchNorm scales/shifts and biases with
weight_decay 0.0 (SimCLR's "exclude bias and BN from weight decay"). Paddle's float weight_decay
on Momentum is an L2Decay: coupled, added to the gradient before the momentum (g + wd * p), as
torch SGD's weight_decay. Nesterov: v = mu v + g; p -= lr (g + mu v) on both.
Init: paddle.seed(0), paddle's default conv/linear init; BatchNorm weight 1 + N(0, 0.1), bias
N(0, 0.1), running mean N(0, 0.1), running variance 1 + U(0, 0.5), fc2's bias N(0, 0.1)
(trained-looking).

PADIFF_BUG (this side only):
  paddle_decay_bn_bias -> Momentum(..., weight_decay=5e-4) over model.parameters(): the BatchNorm
              scales/shifts and fc2's bias are decayed too (the reference excludes them)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_decay_bn_bias"} | {"ntxent_self_negative", "head_dropout_default"}  # the torch side's, ignored here
N_IMG, IMG, CROP, FEAT, HID, PROJ = 8, 12, 10, 16, 32, 8
TAU, LR, MOMENTUM, WD, P_DROP = 0.2, 0.05, 0.9, 5e-4, 0.1


def augment_params(step):
    """Images and every augmentation parameter of one step (numpy; the same numbers on both sides)."""
    rng = np.random.default_rng(5500 + step)
    images = rng.standard_normal((N_IMG, 3, IMG, IMG)).astype("float32")
    offsets = rng.integers(0, IMG - CROP + 1, (2, N_IMG, 2))
    flips = rng.random((2, N_IMG)) < 0.5
    contrast = rng.uniform(0.6, 1.4, (2, N_IMG, 3, 1, 1)).astype("float32")
    shift = rng.uniform(-0.3, 0.3, (2, N_IMG, 3, 1, 1)).astype("float32")
    noise = (0.05 * rng.standard_normal((2, N_IMG, 3, CROP, CROP))).astype("float32")
    return images, offsets, flips, contrast, shift, noise


class Encoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2D(3, 8, 3, padding=1, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(8, momentum=0.9, epsilon=1e-5)
        self.conv2 = nn.Conv2D(8, FEAT, 3, stride=2, padding=1, bias_attr=False)
        self.bn2 = nn.BatchNorm2D(FEAT, momentum=0.9, epsilon=1e-5)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        return paddle.mean(x, axis=[2, 3])


class ProjectionHead(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(FEAT, HID, bias_attr=False)
        self.bn = nn.BatchNorm1D(HID, momentum=0.9, epsilon=1e-5)
        self.dropout = nn.Dropout(P_DROP)
        self.fc2 = nn.Linear(HID, PROJ)

    def forward(self, h):
        return self.fc2(self.dropout(F.relu(self.bn(self.fc1(h)))))


class SimCLR(nn.Layer):
    def __init__(self):
        super().__init__()
        self.projector = ProjectionHead()
        self.encoder = Encoder()

    def forward(self, x):
        return self.projector(self.encoder(x))


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = SimCLR()
    for bn in (m.encoder.bn1, m.encoder.bn2, m.projector.bn):
        c = bn.weight.shape
        bn.weight.set_value(1.0 + paddle.normal(0.0, 0.1, c))
        bn.bias.set_value(paddle.normal(0.0, 0.1, c))
        bn._mean.set_value(paddle.normal(0.0, 0.1, c))
        bn._variance.set_value(1.0 + paddle.uniform(c, min=0.0, max=0.5))
    m.projector.fc2.bias.set_value(paddle.normal(0.0, 0.1, m.projector.fc2.bias.shape))
    m.train()
    return m


def inputs(step=0):
    images, offsets, flips, contrast, shift, noise = augment_params(step)
    x = paddle.to_tensor(images)
    views = []
    for v in range(2):
        crops = []
        for i in range(N_IMG):
            oy, ox = int(offsets[v, i, 0]), int(offsets[v, i, 1])
            c = x[i, :, oy:oy + CROP, ox:ox + CROP]
            if flips[v, i]:
                c = paddle.flip(c, axis=[2])
            crops.append(c)
        view = paddle.stack(crops) * paddle.to_tensor(contrast[v]) + paddle.to_tensor(shift[v])
        views.append(view + paddle.to_tensor(noise[v]))
    return (paddle.concat(views, axis=0),), {}


def loss(output):
    z = F.normalize(output, axis=1)
    n = z.shape[0]
    logits = paddle.matmul(z, z, transpose_y=True) / TAU
    eye = paddle.eye(n).astype("bool")
    logits = paddle.where(eye, paddle.full_like(logits, -1e9), logits)
    labels = (paddle.arange(n, dtype="int64") + n // 2) % n
    return F.cross_entropy(logits, labels)


def optimizer(model):
    params = [p for p in model.parameters() if not p.stop_gradient]
    if bug(BUGS) == "paddle_decay_bn_bias":
        return paddle.optimizer.Momentum(learning_rate=LR, momentum=MOMENTUM, parameters=params,
                                         use_nesterov=True, weight_decay=WD)
    groups = [{"params": [p for p in params if p.ndim >= 2], "weight_decay": WD},
              {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0}]
    return paddle.optimizer.Momentum(learning_rate=LR, momentum=MOMENTUM, parameters=groups, use_nesterov=True)
