"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a small convolutional
multi-label tagger (6 tags per image, any number on), class-weighted multi-label soft-margin loss,
SGD with momentum, dampening and weight decay (torch.optim.SGD semantics, written by hand because
paddle's Momentum has no dampening) and a linear learning-rate warm-up (paddle's LinearWarmup),
3 steps, a new batch every step.

    ConvTagger: registers stem (Conv2D 3 -> 8, 3x3, pad 1), conv (Conv2D 8 -> 16, 3x3, pad 1),
        gn (GroupNorm 4 groups x 16), drop (Dropout 0.2), head (Linear 16 -> 6)
    forward(x [8, 3, 12, 12]): relu(stem) -> F.max_pool2d 2 -> relu(gn(conv)) -> mean over H, W
        -> drop -> head -> logits [8, 6]  (relu, max pool and the mean are functional)

Data: inputs(step): images N(0, 1) [8, 3, 12, 12] and multi-hot tags [8, 6] (tag k on with
probability PREVALENCE[k], at least one tag per image) from default_rng(4410 + step).
Loss: F.binary_cross_entropy_with_logits(logits, tags, weight=CLASS_WEIGHT) averaged over the
8 x 6 entries == torch's MultiLabelSoftMarginLoss(weight) (mean over classes, then batch);
CLASS_WEIGHT = [0.6, 1.4, 1.0, 2.2, 0.8, 1.7] (rarer tags heavier).
Optimizer: DampenedMomentum(paddle.optimizer.Optimizer), step():
    g = grad + wd * p;  v = g at the first step (torch's buffer = clone(g)), else v = mu v + (1 - d) g;
    p <- p - lr v
mu 0.9, dampening d 0.1, wd 5e-4 on every parameter; lr from
LinearWarmup(learning_rate=0.2, warmup_steps=3, start_lr=0.05, end_lr=0.2): 0.05, 0.1, 0.15 for
updates 1..3 (the scheduler is returned with the optimizer, stepped after each update).
Init (person A): paddle.seed(441); conv / linear weights paddle's defaults, biases N(0, 0.1),
GroupNorm weight 1 + N(0, 0.15) and bias N(0, 0.1) (a trained look).

PADIFF_BUG (this side only):
  paddle_pos_weight      -> the class weights passed as pos_weight= of
              binary_cross_entropy_with_logits (only the positive terms weighted) instead of weight=
  paddle_velocity_zeros  -> the velocity starts at zeros (v = mu * 0 + (1 - d) g at the first
              step): the first update is (1 - d) = 0.9 of torch's, whose buffer starts as g
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_pos_weight", "paddle_velocity_zeros"} | {"torch_keep_prob"}  # the torch side's, ignored here
N_IMG, C_IN, SIZE, N_TAGS = 8, 3, 12, 6
PREVALENCE = [0.5, 0.2, 0.35, 0.1, 0.6, 0.15]
CLASS_WEIGHT = [0.6, 1.4, 1.0, 2.2, 0.8, 1.7]
BASE_LR, WARMUP_STEPS, START_LR = 0.2, 3, 0.05
MOMENTUM, DAMPENING, WEIGHT_DECAY = 0.9, 0.1, 5e-4
DROP = 0.2

_TAGS = {}


def make_batch(step):
    rng = np.random.default_rng(4410 + step)
    x = rng.standard_normal((N_IMG, C_IN, SIZE, SIZE)).astype("float32")
    y = (rng.random((N_IMG, N_TAGS)) < np.asarray(PREVALENCE)).astype("float32")
    y[np.arange(N_IMG), rng.integers(0, N_TAGS, N_IMG)] = 1.0  # every image has a tag
    return x, y


class ConvTagger(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2D(C_IN, 8, 3, padding=1)
        self.conv = nn.Conv2D(8, 16, 3, padding=1)
        self.gn = nn.GroupNorm(4, 16)
        self.drop = nn.Dropout(DROP)
        self.head = nn.Linear(16, N_TAGS)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.stem(x)), 2)
        x = F.relu(self.gn(self.conv(x)))
        return self.head(self.drop(x.mean(axis=[2, 3])))


def model():
    bug(BUGS)
    paddle.seed(441)
    m = ConvTagger()
    for name, p in m.named_parameters():
        if name.startswith("gn.") and name.endswith("weight"):
            p.set_value(1.0 + paddle.normal(0.0, 0.15, p.shape))
        elif name.endswith("bias"):
            p.set_value(paddle.normal(0.0, 0.1, p.shape))
    m.train()
    return m


def inputs(step=0):
    x, y = make_batch(step)
    _TAGS["y"] = y
    return (paddle.to_tensor(x),), {}


def loss(output):
    logits = output
    y = paddle.to_tensor(_TAGS["y"]).astype(logits.dtype)
    w = paddle.to_tensor(CLASS_WEIGHT, dtype=logits.dtype)
    if bug(BUGS) == "paddle_pos_weight":
        return F.binary_cross_entropy_with_logits(logits, y, pos_weight=w)
    return F.binary_cross_entropy_with_logits(logits, y, weight=w)


class DampenedMomentum(paddle.optimizer.Optimizer):
    """torch.optim.SGD(momentum, dampening, weight_decay) by hand; the buffer starts as the
    (decayed) gradient, as torch's does."""

    def __init__(self, learning_rate, parameters, momentum, dampening, weight_decay, zero_init=False):
        super().__init__(learning_rate=learning_rate, parameters=parameters)
        self._mu, self._damp, self._wd, self._zero_init = momentum, dampening, weight_decay, zero_init
        self._velocity = {}

    @paddle.no_grad()
    def step(self):
        lr = self.get_lr()
        for p in self._parameter_list:
            if p.stop_gradient or p.grad is None:
                continue
            g = p.grad + self._wd * p
            v = self._velocity.get(p.name)
            if v is None and not self._zero_init:
                v = g.clone()
            else:
                v = self._mu * (paddle.zeros_like(p) if v is None else v) + (1.0 - self._damp) * g
            self._velocity[p.name] = v
            p.subtract_(lr * v)


def optimizer(model):
    sched = paddle.optimizer.lr.LinearWarmup(learning_rate=BASE_LR, warmup_steps=WARMUP_STEPS,
                                             start_lr=START_LR, end_lr=BASE_LR)
    params = [p for p in model.parameters() if not p.stop_gradient]
    opt = DampenedMomentum(sched, params, MOMENTUM, DAMPENING, WEIGHT_DECAY,
                           zero_init=(bug(BUGS) == "paddle_velocity_zeros"))
    return opt, sched
