"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a small convolutional
regressor with BatchNorm (running statistics updated every step) and dropout, trained 3 steps with
the smooth-L1 loss (beta 0.5) and SGD momentum + weight decay under a multi-step schedule.

    BoxRegressor: registers encoder = Sequential(Conv2D(3, 8, 3, padding 1, no bias),
        BatchNorm2D(8), ReLU, Conv2D(8, 16, 3, stride 2, padding 1, no bias), BatchNorm2D(16),
        ReLU) (.0 .. .5), then neck (Linear 16 -> 32, no bias), neck_bn (BatchNorm1D(32)),
        dropout (Dropout 0.2), out (Linear 32 -> 2)
    forward: encoder, global average pooling inline (paddle.mean over H, W), neck, neck_bn,
        F.relu (functional), dropout, out
BatchNorm: momentum 0.95 (paddle's convention: running = 0.95 running + 0.05 batch; torch's 0.05),
epsilon 1e-3. model.train(): batch statistics, running stats updated every forward.
Batch 8 of 3x8x8 images per step (default_rng(4200 + step)), 2 regression targets per image (a
fixed nonlinear teacher of the image plus noise, the same numpy numbers on both sides).

Loss: the built-in F.smooth_l1_loss(pred, target, delta=0.5) / 0.5: paddle's `delta` makes it the
Huber loss (0.5 d^2 if |d| < delta else delta (|d| - 0.5 delta)) = delta x torch's SmoothL1(beta);
person A divides by delta to get the smooth-L1 of the reference.
Optimizer: Momentum(learning_rate=MultiStepDecay(0.05, milestones=[1, 2], gamma=0.5), momentum 0.9,
weight_decay=1e-3 (L2Decay added to the gradient)); optimizer() returns (optimizer, scheduler),
stepped after every update: lr 0.05, 0.025, 0.0125 for updates 1..3.
Init: paddle.seed(42), paddle's default conv/linear init; BatchNorm weights 1 + N(0, 0.1), biases
N(0, 0.1), running mean N(0, 0.1), running variance 1 + U(0, 0.3) (a trained-looking state).

PADIFF_BUG (this side only):
  paddle_huber_delta -> the loss is F.smooth_l1_loss(pred, target, delta=0.5) without the / 0.5:
              paddle's delta is a Huber delta, so the loss (and every gradient) is 0.5 x the
              reference's smooth-L1
  paddle_keep_prob   -> Dropout(p=0.8): the reference's keep probability (TF keep_prob 0.8) taken
              for paddle's drop probability
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_huber_delta", "paddle_keep_prob"} | {"torch_dampening"}  # the torch side's, ignored here
BATCH, IMG, N_OUT = 8, 8, 2
BETA = 0.5
LR, MILESTONES, GAMMA, MOMENTUM, WD = 0.05, [1, 2], 0.5, 0.9, 1e-3
BN_MOMENTUM, BN_EPS = 0.95, 1e-3
KEEP_PROB, DROP_P = 0.8, 0.2

_TARGET = {}


def regression_batch(step):
    """Images [8, 3, 8, 8] and targets [8, 2] of one step (numpy)."""
    rng = np.random.default_rng(4200 + step)
    x = rng.standard_normal((BATCH, 3, IMG, IMG)).astype("float32")
    w = np.random.default_rng(4299).standard_normal((3, N_OUT))  # the fixed teacher
    feats = np.stack([x.mean((2, 3)), np.abs(x).mean((2, 3)) - 0.8], -1).reshape(BATCH, 6)
    y = 2.0 * np.tanh(feats[:, :3] @ w) + feats[:, 3:] @ w + 0.3 * rng.standard_normal((BATCH, N_OUT))
    return x, y.astype("float32")


class BoxRegressor(nn.Layer):
    def __init__(self):
        super().__init__()
        drop_p = KEEP_PROB if bug(BUGS) == "paddle_keep_prob" else DROP_P
        self.encoder = nn.Sequential(
            nn.Conv2D(3, 8, 3, padding=1, bias_attr=False),
            nn.BatchNorm2D(8, momentum=BN_MOMENTUM, epsilon=BN_EPS),
            nn.ReLU(),
            nn.Conv2D(8, 16, 3, stride=2, padding=1, bias_attr=False),
            nn.BatchNorm2D(16, momentum=BN_MOMENTUM, epsilon=BN_EPS),
            nn.ReLU(),
        )
        self.neck = nn.Linear(16, 32, bias_attr=False)
        self.neck_bn = nn.BatchNorm1D(32, momentum=BN_MOMENTUM, epsilon=BN_EPS)
        self.dropout = nn.Dropout(p=drop_p)
        self.out = nn.Linear(32, N_OUT)

    def forward(self, images):
        h = paddle.mean(self.encoder(images), axis=[2, 3])
        h = F.relu(self.neck_bn(self.neck(h)))
        return self.out(self.dropout(h))


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(42)
    m = BoxRegressor()
    for bn in (m.encoder[1], m.encoder[4], m.neck_bn):
        c = bn.weight.shape
        bn.weight.set_value(1.0 + paddle.normal(0.0, 0.1, c))
        bn.bias.set_value(paddle.normal(0.0, 0.1, c))
        bn._mean.set_value(paddle.normal(0.0, 0.1, c))
        bn._variance.set_value(1.0 + paddle.uniform(c, min=0.0, max=0.3))
    m.out.bias.set_value(paddle.normal(0.0, 0.1, m.out.bias.shape))
    m.train()
    return m


def inputs(step=0):
    x, y = regression_batch(step)
    _TARGET["y"] = y
    return (paddle.to_tensor(x),), {}


def loss(output):
    target = paddle.to_tensor(_TARGET["y"]).astype(output.dtype)
    huber = F.smooth_l1_loss(output, target, reduction="mean", delta=BETA)
    if bug(BUGS) == "paddle_huber_delta":
        return huber
    return huber / BETA


def optimizer(model):
    sched = paddle.optimizer.lr.MultiStepDecay(learning_rate=LR, milestones=MILESTONES, gamma=GAMMA)
    params = [p for p in model.parameters() if not p.stop_gradient]
    opt = paddle.optimizer.Momentum(learning_rate=sched, momentum=MOMENTUM, parameters=params, weight_decay=WD)
    return opt, sched
