"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a small CNN facial-
landmark regressor trained 3 steps with the Wing loss (Feng et al. 2018).

    WingLandmarkNet: registers head (LandmarkHead) first, then stem = ConvBlock(3 -> 8),
        body = ConvBlock(8 -> 16), gap (AdaptiveAvgPool2D(2)); calls stem, body, gap, flatten, head
    ConvBlock: conv (Conv2D 3x3, padding 1, bias_attr=False), bn (BatchNorm2D, momentum 0.9,
        epsilon 1e-5), pool (MaxPool2D(2)); ReLU functional (F.relu) between bn and pool
    LandmarkHead: drop_in (Dropout 0.2), fc1 (Linear 64 -> 32), ReLU functional, drop_hid
        (Dropout 0.1), fc2 (Linear 32 -> 10)
    forward(images [8, 3, 16, 16]) -> 2K = 10 coordinates (x1, y1, ..., x5, y5) [8, 10], in the
        pixels of the 32x32 original (the input is a 2x downscaled crop)

Data: inputs(step): default_rng(4080 + step): 5 landmarks per face, uniform in [2, 30] (32-pixel
frame); the image paints a Gaussian blob (sigma 1.2 px at the 16-px scale) per landmark on channel
k % 3, plus N(0, 0.3) noise; the targets [8, 10] are kept for loss().
Loss: Wing loss, w 10, epsilon 2, C = w - w ln(1 + w / epsilon) (makes the two pieces meet at
|x| = w): x = |target - pred|; w ln(1 + x / epsilon) where x < w, else x - C; mean over all.
Optimizer: AdamW(learning_rate=WarmupExpDecay(0.01), beta1 0.9, beta2 0.999, epsilon 1e-8,
weight_decay 0.05) with apply_decay_param_fun: decay on the 4-D / 2-D weights only (conv,
linear; paddle passes the parameter's .name, so the set is built from p.name).
Schedule: person A's own LRScheduler subclass WarmupExpDecay, factor(e) = (e + 1) / 2 for the 2
warm-up steps, then 0.9 ** e: lr 0.005, 0.01, 0.0081 for updates 1..3; optimizer() returns
(optimizer, scheduler), the scheduler stepped after every update.
Init: paddle.seed(0), paddle's default conv / linear weights; BatchNorm weight 1 + N(0, 0.1), bias
N(0, 0.1), running mean N(0, 0.1), running variance 1 + U(0, 0.5); fc1 bias N(0, 0.1), fc2 bias
16 + N(0, 0.5) (the mean face).

PADIFF_BUG (this side only):
  paddle_warmup_zero -> the warm-up factor written as e / 2 (warm-up "from zero"): lr 0, 0.005,
              0.0081: the first update does nothing (Adam's moments still accumulate), the second
              is half as large
"""
import math

import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_warmup_zero"} | {"torch_wing_signed", "torch_drop_swap"}  # the torch side's, ignored here
N_LMK, BATCH, IMG, FRAME = 5, 8, 16, 32
WING_W, WING_EPS = 10.0, 2.0
LR, WD, WARMUP, DECAY = 0.01, 0.05, 2, 0.9

_BATCH = {}


def faces(step):
    """numpy: images [8, 3, 16, 16] and landmark targets [8, 10] (32-pixel frame)."""
    rng = np.random.default_rng(4080 + step)
    lmk = rng.uniform(2.0, FRAME - 2.0, (BATCH, N_LMK, 2))
    yy, xx = np.mgrid[0:IMG, 0:IMG].astype(np.float64)
    img = 0.3 * rng.standard_normal((BATCH, 3, IMG, IMG))
    for b in range(BATCH):
        for k in range(N_LMK):
            cx, cy = lmk[b, k] / (FRAME / IMG)
            img[b, k % 3] += np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * 1.2 ** 2))
    return img.astype("float32"), lmk.reshape(BATCH, 2 * N_LMK).astype("float32")


class ConvBlock(nn.Layer):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2D(cin, cout, 3, padding=1, bias_attr=False)
        self.bn = nn.BatchNorm2D(cout, momentum=0.9, epsilon=1e-5)
        self.pool = nn.MaxPool2D(2)

    def forward(self, x):
        return self.pool(F.relu(self.bn(self.conv(x))))


class LandmarkHead(nn.Layer):
    def __init__(self, d_in, hidden, n_out):
        super().__init__()
        self.drop_in = nn.Dropout(0.2)
        self.fc1 = nn.Linear(d_in, hidden)
        self.drop_hid = nn.Dropout(0.1)
        self.fc2 = nn.Linear(hidden, n_out)

    def forward(self, x):
        x = F.relu(self.fc1(self.drop_in(x)))
        return self.fc2(self.drop_hid(x))


class WingLandmarkNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.head = LandmarkHead(16 * 2 * 2, 32, 2 * N_LMK)
        self.stem = ConvBlock(3, 8)
        self.body = ConvBlock(8, 16)
        self.gap = nn.AdaptiveAvgPool2D(2)

    def forward(self, images):
        x = self.gap(self.body(self.stem(images)))
        return self.head(paddle.flatten(x, start_axis=1))


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = WingLandmarkNet()
    for blk in (m.stem, m.body):
        c = blk.bn.weight.shape
        blk.bn.weight.set_value(1.0 + paddle.normal(0.0, 0.1, c))
        blk.bn.bias.set_value(paddle.normal(0.0, 0.1, c))
        blk.bn._mean.set_value(paddle.normal(0.0, 0.1, c))
        blk.bn._variance.set_value(1.0 + paddle.uniform(c, min=0.0, max=0.5))
    m.head.fc1.bias.set_value(paddle.normal(0.0, 0.1, m.head.fc1.bias.shape))
    m.head.fc2.bias.set_value(FRAME / 2 + paddle.normal(0.0, 0.5, m.head.fc2.bias.shape))
    m.train()
    return m


def inputs(step=0):
    img, lmk = faces(step)
    _BATCH["target"] = lmk
    return (paddle.to_tensor(img),), {}


def wing_loss(pred, target, w=WING_W, epsilon=WING_EPS):
    x = paddle.abs(target - pred)
    c = w - w * math.log(1.0 + w / epsilon)
    return paddle.where(x < w, w * paddle.log1p(x / epsilon), x - c).mean()


def loss(output):
    return wing_loss(output, paddle.to_tensor(_BATCH["target"]).astype(output.dtype))


class WarmupExpDecay(paddle.optimizer.lr.LRScheduler):
    """Linear warm-up for ``warmup`` steps, then ``decay ** epoch`` (a LambdaLR-style factor)."""

    def __init__(self, learning_rate, warmup, decay, from_zero=False, last_epoch=-1):
        self.warmup, self.decay, self.from_zero = warmup, decay, from_zero
        super().__init__(learning_rate, last_epoch)

    def get_lr(self):
        e = self.last_epoch
        if e < self.warmup:
            return self.base_lr * ((e if self.from_zero else e + 1) / self.warmup)
        return self.base_lr * self.decay ** e


def optimizer(model):
    sched = WarmupExpDecay(LR, WARMUP, DECAY, from_zero=bug(BUGS) == "paddle_warmup_zero")
    params = [p for p in model.parameters() if not p.stop_gradient]
    decay = {p.name for p in params if p.ndim >= 2}
    opt = paddle.optimizer.AdamW(learning_rate=sched, beta1=0.9, beta2=0.999, epsilon=1e-8, parameters=params,
                                 weight_decay=WD, apply_decay_param_fun=lambda name: name in decay)
    return opt, sched
