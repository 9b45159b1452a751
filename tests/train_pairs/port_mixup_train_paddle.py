"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a small CNN classifier
trained 3 steps with mixup and label smoothing.

    MixupNet: registers classifier (Linear 16 -> 10) first, then block1 = ConvBNReLU(3 -> 8),
        block2 = ConvBNReLU(8 -> 16, stride 2), pool (AdaptiveAvgPool2D(1)); calls block1,
        block2, pool, flatten, classifier
    ConvBNReLU: conv (Conv2D 3x3, padding 1, bias_attr=False, data_format NCHW),
        bn (BatchNorm2D, momentum 0.9, epsilon 1e-5), act (ReLU)
Batch 8 of 3x8x8 images, 10 classes, model.train() (batch statistics).

Mixup: inputs(step) draws a batch from default_rng(4950 + step), lambda ~ Beta(1, 1) and a
permutation (the per-step mixup inputs, the same numbers on both sides) and mixes the images with
paddle ops: lam * x + (1 - lam) * paddle.gather(x, perm). Loss: soft targets
F.label_smooth(lam * one_hot(y) + (1 - lam) * one_hot(y[perm]), epsilon=0.1) and
F.cross_entropy(..., soft_label=True).
Optimizer: Momentum(learning_rate=CosineAnnealingDecay(0.1, T_max=3), momentum 0.9,
use_nesterov=True, weight_decay=5e-4 (an L2Decay added to the gradient)) over the trainable
parameters; optimizer() returns (optimizer, scheduler), the scheduler stepped after every update:
lr 0.1, 0.075, 0.025 for updates 1..3.
Init: paddle.seed(0), paddle's default conv/linear init; BatchNorm weight 1 + N(0, 0.1), bias
N(0, 0.1).

PADIFF_BUG (this side only):
  paddle_sched_ahead -> CosineAnnealingDecay(..., last_epoch=0) ("start at epoch 0"): paddle's
              scheduler steps once in its constructor, so it starts at epoch 1: the schedule runs
              one step ahead (lr 0.075, 0.025, 0.0), as a loop stepping it BEFORE the optimizer
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_sched_ahead"} | {"targets_unmixed", "no_nesterov"}  # the torch side's, ignored here
N_CLS, BATCH, IMG, STEPS = 10, 8, 8, 3
LR, MOMENTUM, WD, SMOOTH = 0.1, 0.9, 5e-4, 0.1

_MIX = {}


def mixup_batch(step):
    """The numpy batch and the mixup draw of one step: images, labels, lambda, permutation."""
    rng = np.random.default_rng(4950 + step)
    x = rng.standard_normal((BATCH, 3, IMG, IMG)).astype("float32")
    y = rng.integers(0, N_CLS, BATCH).astype("int64")
    lam = float(rng.beta(1.0, 1.0))
    perm = rng.permutation(BATCH).astype("int64")
    return x, y, lam, perm


class ConvBNReLU(nn.Layer):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv = nn.Conv2D(cin, cout, 3, stride=stride, padding=1, bias_attr=False, data_format="NCHW")
        self.bn = nn.BatchNorm2D(cout, momentum=0.9, epsilon=1e-5, data_format="NCHW")
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class MixupNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.classifier = nn.Linear(16, N_CLS)
        self.block1 = ConvBNReLU(3, 8)
        self.block2 = ConvBNReLU(8, 16, stride=2)
        self.pool = nn.AdaptiveAvgPool2D(1)

    def forward(self, x):
        x = self.pool(self.block2(self.block1(x)))
        return self.classifier(paddle.flatten(x, 1))


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = MixupNet()
    for blk in (m.block1, m.block2):
        blk.bn.weight.set_value(1.0 + paddle.normal(0.0, 0.1, blk.bn.weight.shape))
        blk.bn.bias.set_value(paddle.normal(0.0, 0.1, blk.bn.bias.shape))
    m.train()
    return m


def inputs(step=0):
    x, y, lam, perm = mixup_batch(step)
    _MIX.update(y=y, lam=lam, perm=perm)
    x = paddle.to_tensor(x)
    mixed = lam * x + (1.0 - lam) * paddle.gather(x, paddle.to_tensor(perm), axis=0)
    return (mixed,), {}


def loss(output):
    y = paddle.to_tensor(_MIX["y"])
    lam = _MIX["lam"]
    y_b = paddle.gather(y, paddle.to_tensor(_MIX["perm"]))
    dt = output.dtype
    soft = lam * F.one_hot(y, N_CLS).astype(dt) + (1.0 - lam) * F.one_hot(y_b, N_CLS).astype(dt)
    soft = F.label_smooth(soft, epsilon=SMOOTH)
    return F.cross_entropy(output, soft, soft_label=True)


def optimizer(model):
    last_epoch = 0 if bug(BUGS) == "paddle_sched_ahead" else -1
    sched = paddle.optimizer.lr.CosineAnnealingDecay(learning_rate=LR, T_max=STEPS, last_epoch=last_epoch)
    params = [p for p in model.parameters() if not p.stop_gradient]
    opt = paddle.optimizer.Momentum(learning_rate=sched, momentum=MOMENTUM, parameters=params,
                                    use_nesterov=True, weight_decay=WD)
    return opt, sched
