"""Hand-written port in TRAINING mode, paddle side (written by "person A"): Barlow Twins style
self-supervised training of a tiny CNN backbone with a projector, 3 steps.

    BarlowTwins: registers projector first, then backbone; forward(y1, y2):
        z = projector(backbone(concat([y1, y2])))  (both views in ONE batch: every BatchNorm sees
            the 2B images of the step once)
        z1, z2 = split(z); each standardised inline over the batch ((z - mean) / sqrt(var + 1e-5),
            biased variance: BatchNorm1D without affine, written out)
        returns c = z1n^T @ z2n / B, the [D, D] cross-correlation matrix
    Backbone: stem (Conv2D 3 -> 8, 3x3, pad 1, no bias), stem_bn (BatchNorm2D), down (Conv2D
        8 -> 16, 3x3, stride 2, pad 1, no bias), down_bn, ReLU via F.relu, global mean pool -> 16
    projector: nn.Sequential(Linear(16, 32, bias_attr=False), BatchNorm1D(32), ReLU,
        Linear(32, 32, bias_attr=False), BatchNorm1D(32), ReLU, Linear(32, 32, bias_attr=False))
Batch B = 16 images, two views each: inputs(step) draws base images 3x8x8 from
default_rng(7000 + step) and per view a flip, a contrast scale, a brightness shift and noise
(numpy numbers, applied with paddle ops).
Loss: on_diag = sum((diag(c) - 1)^2), off_diag = sum(offdiag(c)^2),
loss = on_diag + LAMBD * off_diag, LAMBD = 0.0051 (the barlowtwins default --lambd 0.0051).
Optimizer: AdamW(lr=CosineAnnealingDecay(2e-3, T_max=10, eta_min=2e-6), beta1 0.9, beta2 0.999,
epsilon 1e-8, weight_decay 1e-2 on tensors of ndim >= 2 only (apply_decay_param_fun on p.name));
optimizer() returns (optimizer, scheduler): lr 2e-3, 1.951e-3, 1.809e-3 for updates 1..3 (the
first 3 steps of a 10-step cosine).
Init: paddle.seed(0), paddle's default init; BatchNorm weight 1 + N(0, 0.1), bias N(0, 0.1).

PADIFF_BUG (this side only):
  paddle_lambd_old -> LAMBD = 3.9e-3 (the lambda of the first barlowtwins release) instead of
              5.1e-3
  paddle_bn_mom    -> the projector's BatchNorm1D layers built with momentum=0.1 (torch's value
              copied; paddle's momentum weights the OLD statistics: 0.9 is torch's 0.1)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_lambd_old", "paddle_bn_mom"} | {"torch_cos_half"}  # the torch side's, ignored here
B, IMG, FEAT, PROJ = 16, 8, 16, 32
LAMBD, EPS_STD = 0.0051, 1e-5
LR, WD, T_MAX = 2e-3, 1e-2, 10


def views(step):
    rng = np.random.default_rng(7000 + step)
    base = rng.standard_normal((B, 3, IMG, IMG)).astype("float32")
    out = []
    for _ in range(2):
        flip = rng.random(B) < 0.5
        contrast = rng.uniform(0.7, 1.3, B).astype("float32")
        shift = rng.uniform(-0.2, 0.2, B).astype("float32")
        noise = (0.05 * rng.standard_normal((B, 3, IMG, IMG))).astype("float32")
        out.append((flip, contrast, shift, noise))
    return base, out


def augment(base, flip, contrast, shift, noise):
    x = paddle.where(paddle.to_tensor(flip).reshape([B, 1, 1, 1]), paddle.flip(base, axis=[3]), base)
    return x * paddle.to_tensor(contrast).reshape([B, 1, 1, 1]) + paddle.to_tensor(shift).reshape([B, 1, 1, 1]) \
        + paddle.to_tensor(noise)


class Backbone(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2D(3, 8, 3, padding=1, bias_attr=False)
        self.stem_bn = nn.BatchNorm2D(8)
        self.down = nn.Conv2D(8, FEAT, 3, stride=2, padding=1, bias_attr=False)
        self.down_bn = nn.BatchNorm2D(FEAT)

    def forward(self, x):
        x = F.relu(self.stem_bn(self.stem(x)))
        x = F.relu(self.down_bn(self.down(x)))
        return paddle.mean(x, axis=[2, 3])


def standardize(z):
    mu = z.mean(axis=0, keepdim=True)
    var = ((z - mu) ** 2).mean(axis=0, keepdim=True)
    return (z - mu) / paddle.sqrt(var + EPS_STD)


class BarlowTwins(nn.Layer):
    def __init__(self):
        super().__init__()
        mom = 0.1 if bug(BUGS) == "paddle_bn_mom" else 0.9
        self.projector = nn.Sequential(
            nn.Linear(FEAT, PROJ, bias_attr=False), nn.BatchNorm1D(PROJ, momentum=mom), nn.ReLU(),
            nn.Linear(PROJ, PROJ, bias_attr=False), nn.BatchNorm1D(PROJ, momentum=mom), nn.ReLU(),
            nn.Linear(PROJ, PROJ, bias_attr=False),
        )
        self.backbone = Backbone()

    def forward(self, y1, y2):
        z = self.projector(self.backbone(paddle.concat([y1, y2], axis=0)))
        z1, z2 = paddle.split(z, 2, axis=0)
        return paddle.matmul(standardize(z1), standardize(z2), transpose_x=True) / y1.shape[0]


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = BarlowTwins()
    for layer in m.sublayers():
        if isinstance(layer, (nn.BatchNorm1D, nn.BatchNorm2D)):
            layer.weight.set_value(1.0 + paddle.normal(0.0, 0.1, layer.weight.shape))
            layer.bias.set_value(paddle.normal(0.0, 0.1, layer.bias.shape))
    m.train()
    return m


def inputs(step=0):
    base, vs = views(step)
    base = paddle.to_tensor(base)
    return (augment(base, *vs[0]), augment(base, *vs[1])), {}


def loss(output):
    lambd = 3.9e-3 if bug(BUGS) == "paddle_lambd_old" else LAMBD
    d = paddle.diagonal(output)
    on_diag = ((d - 1.0) ** 2).sum()
    off_diag = (output ** 2).sum() - (d ** 2).sum()
    return on_diag + lambd * off_diag


def optimizer(model):
    sched = paddle.optimizer.lr.CosineAnnealingDecay(learning_rate=LR, T_max=T_MAX, eta_min=LR * 1e-3)
    params = [p for p in model.parameters() if not p.stop_gradient]
    decay = {p.name for p in params if p.ndim >= 2}
    opt = paddle.optimizer.AdamW(learning_rate=sched, beta1=0.9, beta2=0.999, epsilon=1e-8, parameters=params,
                                 weight_decay=WD, apply_decay_param_fun=lambda name: name in decay)
    return opt, sched
