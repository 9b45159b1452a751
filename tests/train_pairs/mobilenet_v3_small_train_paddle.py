"""MobileNetV3-Small in TRAINING mode, paddle.vision side: random init (no download), 10
classes, inputs N(0, 1) [4, 3, 96, 96], model.train() (BatchNorm batch statistics and
running-stat updates; classifier dropout 0.2), cross-entropy, and NESTEROV momentum SGD with a
MULTI-STEP schedule: paddle.optimizer.Momentum(momentum=0.9, use_nesterov=True) driven by
paddle.optimizer.lr.MultiStepDecay(0.01, milestones=[2, 3], gamma=0.1) (lr 0.01, 0.01, 1e-3,
1e-4 for updates 1..4). Same batch every step. Twin: mobilenet_v3_small_train_torch.py.
Ground truth: mobilenet_v3_small_train_truth.json (run with --steps 4).

Conventions (by design, not bugs):
- BatchNorm: both libraries build this model's norms with eps 0.001; momentum paddle 0.99 ==
  torchvision 0.01 (running = 0.99 running + 0.01 batch); paddle stores the biased batch
  variance, torch the unbiased one (N / (N - 1), N = 4 x H x W: 36 in the last stage).
- paddle nesterov: v = mu v + g; w -= lr (g + mu v). torch SGD(nesterov=True): buf = g at the
  first step (paddle's zero velocity gives the same), then buf = mu buf + g; w -= lr (g + mu
  buf): the same algorithm. paddle's keyword is `use_nesterov`, torch's `nesterov`.
- paddle's Hardsigmoid slope is 0.1666667, torch's 1/6 (2e-8 relative).

PADIFF_BUG (this side only):
  paddle_nesterov_kw -> Momentum(momentum=0.9) without use_nesterov=True (torch's `nesterov`
              keyword has no paddle spelling, the port dropped it): classical momentum
  paddle_bn_momentum_tv -> every BatchNorm2D's momentum set to 0.01, torchvision's value
              copied without converting (paddle's momentum weighs the OLD running value:
              running = 0.01 running + 0.99 batch)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle.vision.models import mobilenet_v3_small

BUGS = {"paddle_nesterov_kw", "paddle_bn_momentum_tv"} | {"bn_affine_frozen"}  # the torch side's, ignored here
BATCH, SIZE = 4, 96
LR, MOMENTUM, MILESTONES, GAMMA = 0.01, 0.9, [2, 3], 0.1
LABELS = np.array([1, 4, 7, 9], "int64")


def model():
    b = bug(BUGS)
    paddle.seed(0)
    m = mobilenet_v3_small(num_classes=10)
    if b == "paddle_bn_momentum_tv":
        for sub in m.sublayers():
            if isinstance(sub, paddle.nn.BatchNorm2D):
                sub._momentum = 0.01
    m.train()
    return m


def inputs():
    x = np.random.default_rng(3).standard_normal((BATCH, 3, SIZE, SIZE)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    return F.cross_entropy(output, paddle.to_tensor(LABELS))


def optimizer(model):
    sched = paddle.optimizer.lr.MultiStepDecay(learning_rate=LR, milestones=MILESTONES, gamma=GAMMA)
    # paddle's parameters() also lists the BatchNorm running stats (stop_gradient=True): leave them out
    params = [p for p in model.parameters() if not p.stop_gradient]
    nesterov = bug(BUGS) != "paddle_nesterov_kw"
    return paddle.optimizer.Momentum(learning_rate=sched, momentum=MOMENTUM, use_nesterov=nesterov,
                                     parameters=params), sched
