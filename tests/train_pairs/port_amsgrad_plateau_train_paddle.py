"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a tabular classifier
(12 numeric features, 4 imbalanced classes) trained with AMSGrad Adam and a loss-driven
reduce-on-plateau schedule, 3 steps, a new minibatch of 32 rows every step.

    TabularMLP (fastai's tabular layout): registers input_norm (BatchNorm1D 12), blocks =
        LayerList of two DenseBlock (fc: Linear without bias, relu, bn: BatchNorm1D, then an
        inline F.dropout with the block's own rate: 0.1 in blocks.0, 0.25 in blocks.1), head
        (Linear 24 -> 4)
    forward(x [32, 12]) -> logits [32, 4]

Data: inputs(step): default_rng(3744 + step): features N(0, 1) x per-column scales, labels the
argmax of a fixed noisy linear teacher (default_rng(3799)) with class offsets (imbalanced).
Loss: class-weighted cross entropy, F.cross_entropy(logits, y, weight=CLASS_W) (paddle's mean
reduction divides by the sum of the picked weights).
Optimizer: paddle.optimizer.Adam(amsgrad=True, beta2 0.99, epsilon 1e-8) over the trainable
parameters (paddle's parameters() also lists the BatchNorm running statistics), whose learning_rate is a
ReduceOnPlateau scheduler (start 0.003, factor 0.5, patience 0, threshold 1e-4 rel) stepped on the
training loss of the step (LossPlateau reads the last loss() value: the spec contract steps the
scheduler without arguments).
Init (person A): paddle.seed(3700) default Linear init; BatchNorm weight 1 + N(0, 0.1), bias
N(0, 0.1), running mean N(0, 0.1), running variance 1 + U(0, 0.3) (numpy default_rng(3701)).

PADIFF_BUG (this side only):
  paddle_no_amsgrad -> Adam built without amsgrad=True (paddle's default False): plain Adam
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_no_amsgrad"} | {"torch_one_dropout", "torch_ce_mean"}  # the torch side's, ignored here
N_FEAT, H1, H2, N_CLS, BATCH = 12, 48, 24, 4, 32
DROP = (0.1, 0.25)
CLASS_W = np.array([0.6, 1.0, 1.4, 2.0], dtype="float32")
LR, BETA1, BETA2, EPS = 0.003, 0.9, 0.99, 1e-8
PLATEAU = dict(mode="min", factor=0.5, patience=0, threshold=1e-4, threshold_mode="rel")

_LAST = {}


def make_batch(step):
    """numpy features [32, 12] and labels [32] of one step (the same numbers on both sides)."""
    teacher = np.random.default_rng(3799)
    w = teacher.standard_normal((N_FEAT, N_CLS))
    offset = np.array([1.2, 0.4, -0.3, -0.9])
    scales = np.linspace(0.5, 2.0, N_FEAT)
    rng = np.random.default_rng(3744 + step)
    x = rng.standard_normal((BATCH, N_FEAT)) * scales
    y = np.argmax(x / scales @ w + offset + 0.5 * rng.standard_normal((BATCH, N_CLS)), axis=1)
    return x.astype("float32"), y.astype("int64")


class DenseBlock(nn.Layer):
    def __init__(self, d_in, d_out, p):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out, bias_attr=False)
        self.bn = nn.BatchNorm1D(d_out, momentum=0.9)
        self.p = p

    def forward(self, x):
        return F.dropout(self.bn(F.relu(self.fc(x))), p=self.p, training=self.training)


class TabularMLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.input_norm = nn.BatchNorm1D(N_FEAT, momentum=0.9)
        self.blocks = nn.LayerList([DenseBlock(N_FEAT, H1, DROP[0]), DenseBlock(H1, H2, DROP[1])])
        self.head = nn.Linear(H2, N_CLS)

    def forward(self, x):
        h = self.input_norm(x)
        for blk in self.blocks:
            h = blk(h)
        return self.head(h)


def _trained_looking(m):
    rng = np.random.default_rng(3701)
    for sub in m.sublayers():
        if isinstance(sub, nn.BatchNorm1D):
            c = sub.weight.shape[0]
            sub.weight.set_value((1.0 + 0.1 * rng.standard_normal(c)).astype("float32"))
            sub.bias.set_value((0.1 * rng.standard_normal(c)).astype("float32"))
            sub._mean.set_value((0.1 * rng.standard_normal(c)).astype("float32"))
            sub._variance.set_value((1.0 + 0.3 * rng.random(c)).astype("float32"))
    m.head.bias.set_value((0.1 * rng.standard_normal(N_CLS)).astype("float32"))


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(3700)
    m = TabularMLP()
    _trained_looking(m)
    m.train()
    return m


def inputs(step=0):
    x, y = make_batch(step)
    _LAST["y"] = y
    return (paddle.to_tensor(x),), {}


def loss(output):
    y = paddle.to_tensor(_LAST["y"])
    w = paddle.to_tensor(CLASS_W).astype(output.dtype)
    out = F.cross_entropy(output, y, weight=w)
    _LAST["loss"] = float(out)
    return out


class LossPlateau(paddle.optimizer.lr.ReduceOnPlateau):
    """ReduceOnPlateau on the training loss: step() without a metric reads the last loss."""

    def step(self, metrics=None, epoch=None):
        if metrics is None:
            metrics = _LAST["loss"]
        return super().step(metrics, epoch)


def optimizer(model):
    sched = LossPlateau(LR, **PLATEAU)
    opt = paddle.optimizer.Adam(learning_rate=sched, beta1=BETA1, beta2=BETA2, epsilon=EPS,
                                parameters=[p for p in model.parameters() if not p.stop_gradient],
                                amsgrad=bug(BUGS) != "paddle_no_amsgrad")
    return opt, sched
