"""Hand-written port in TRAINING mode, paddle side (written by "person A"): metric learning, a small
CNN embedder with L2-normalised embeddings trained 3 steps with the batch-hard triplet loss (P x K
sampling, hardest positive and hardest negative mined in the batch), SGD with momentum and weight
decay.

    EmbeddingNet: registers stem = ConvBNReLU(3 -> 8), stage = ConvBNReLU(8 -> 16, stride 2),
        gap (AdaptiveAvgPool2D(1)), neck (EmbedHead: drop (nn.Dropout, p = CFG["dropout"] = 0.0,
        switched off), fc (Linear 16 -> 16)), l2norm (L2Norm: F.normalize(x, axis=1))
    ConvBNReLU: conv (Conv2D 3x3, padding 1, bias_attr=False), bn (BatchNorm2D, momentum 0.9,
        epsilon 1e-5), act (ReLU)
    forward(images [16, 3, 12, 12]) -> unit-norm embeddings [16, 16]

Data: inputs(step): P = 4 identities x K = 4 images from default_rng(7280 + step): 4 of 8
identities, each image its identity's fixed prototype (default_rng(728)) + 0.7 N(0, 1) noise, the
16 images shuffled; labels kept by the spec for loss(). model.train() (batch statistics).
Loss (batch hard, margin 0.3): dist = paddle.cdist(e, e) (Euclidean); for each anchor the largest
distance among same-label entries (paddle.where(same, dist, -inf).max(1); the anchor itself, at 0,
never wins) and the smallest among other-label entries (paddle.where(same, +inf, dist).min(1));
loss = F.relu(d_ap - d_an + 0.3).mean().
Optimizer: Momentum(learning_rate 0.05, momentum 0.9, weight_decay 5e-4 (L2 added to the
gradient)) over the trainable parameters; no schedule.
Init (person A, "a pretrained embedder"): paddle.seed(28); paddle's default conv/linear init;
BatchNorm weight 1 + N(0, 0.1), bias N(0, 0.1), running mean N(0, 0.1), running variance
1 + U(0, 0.5); Linear bias N(0, 0.05).

PADIFF_BUG (this side only):
  paddle_drop_key -> the neck reads its dropout rate as CFG.get("drop_rate", 0.5) (the key is
              "dropout"): the missing key falls back to 0.5 and the "switched off" dropout drops
              half of the pooled features in training
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_drop_key"} | {"torch_no_sqrt", "torch_dampening"}  # the torch side's, ignored here

CFG = {"dropout": 0.0, "embed_dim": 16, "margin": 0.3}
P_IDS, K_IMGS, N_IDS, IMG = 4, 4, 8, 12
LR, MOMENTUM, WD = 0.05, 0.9, 5e-4

_BATCH = {}


def pk_batch(step):
    """numpy: 16 images [16, 3, 12, 12] (P = 4 identities x K = 4, shuffled) and their labels."""
    protos = np.random.default_rng(728).standard_normal((N_IDS, 3, IMG, IMG))
    rng = np.random.default_rng(7280 + step)
    ids = rng.choice(N_IDS, P_IDS, replace=False)
    labels = np.repeat(ids, K_IMGS)
    x = protos[labels] + 0.7 * rng.standard_normal((P_IDS * K_IMGS, 3, IMG, IMG))
    order = rng.permutation(P_IDS * K_IMGS)
    return x[order].astype("float32"), labels[order].astype("int64")


class ConvBNReLU(nn.Layer):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv = nn.Conv2D(cin, cout, 3, stride=stride, padding=1, bias_attr=False)
        self.bn = nn.BatchNorm2D(cout, momentum=0.9, epsilon=1e-5)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class EmbedHead(nn.Layer):
    def __init__(self, cin, dim):
        super().__init__()
        p = CFG.get("drop_rate", 0.5) if bug(BUGS) == "paddle_drop_key" else CFG["dropout"]
        self.drop = nn.Dropout(p)
        self.fc = nn.Linear(cin, dim)

    def forward(self, x):
        return self.fc(self.drop(x))


class L2Norm(nn.Layer):
    def forward(self, x):
        return F.normalize(x, p=2, axis=1)


class EmbeddingNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = ConvBNReLU(3, 8)
        self.stage = ConvBNReLU(8, 16, stride=2)
        self.gap = nn.AdaptiveAvgPool2D(1)
        self.neck = EmbedHead(16, CFG["embed_dim"])
        self.l2norm = L2Norm()

    def forward(self, images):
        x = self.gap(self.stage(self.stem(images))).flatten(1)
        return self.l2norm(self.neck(x))


def _pretrained_like(m):
    paddle.seed(28)
    for layer in (m.stem.bn, m.stage.bn):
        c = layer.weight.shape[0]
        layer.weight.set_value(1.0 + paddle.normal(0.0, 0.1, [c]))
        layer.bias.set_value(paddle.normal(0.0, 0.1, [c]))
        layer._mean.set_value(paddle.normal(0.0, 0.1, [c]))
        layer._variance.set_value(1.0 + paddle.uniform([c], min=0.0, max=0.5))
    m.neck.fc.bias.set_value(paddle.normal(0.0, 0.05, m.neck.fc.bias.shape))


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = EmbeddingNet()
    _pretrained_like(m)
    m.train()
    return m


def inputs(step=0):
    x, labels = pk_batch(step)
    _BATCH["labels"] = labels
    return (paddle.to_tensor(x),), {}


def loss(output):
    labels = paddle.to_tensor(_BATCH["labels"])
    dist = paddle.cdist(output, output, p=2.0)
    same = labels.unsqueeze(1) == labels.unsqueeze(0)
    inf = paddle.full_like(dist, float("inf"))
    d_ap = paddle.where(same, dist, -inf).max(axis=1)  # hardest positive
    d_an = paddle.where(same, inf, dist).min(axis=1)  # hardest negative
    return F.relu(d_ap - d_an + CFG["margin"]).mean()


def optimizer(model):
    params = [p for p in model.parameters() if not p.stop_gradient]
    return paddle.optimizer.Momentum(learning_rate=LR, momentum=MOMENTUM, weight_decay=WD, parameters=params)
