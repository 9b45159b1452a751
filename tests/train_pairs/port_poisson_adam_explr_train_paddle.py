"""Hand-written count-regression model in TRAINING mode, paddle side ("person A").

    PoissonRateMLP: registers mlp_stack (Sequential: Linear 10 -> 32, LayerNorm(32), GELU,
        Dropout(0.2), Linear 32 -> 32, LayerNorm(32), GELU, Dropout(0.1): .0-.7) and rate_out
        (Linear 32 -> 1)
    forward(x) -> log_rate [32] (rate_out(mlp_stack(x)).squeeze(-1): the log of the expected
        count per unit exposure)

Loss: Poisson negative log-likelihood with the exposure as an offset:
F.poisson_nll_loss(log_rate + log(exposure), counts, log_input=True, full=False, reduction="mean")
(= mean(exp(eta) - y * eta)).
Optimizer: paddle.optimizer.Adam(learning_rate=ExponentialDecay(0.01, gamma 0.9), beta1 0.9,
beta2 0.999, epsilon 1e-8, weight_decay 1e-3 (a float: coupled L2 added to the gradient),
grad_clip=ClipGradByGlobalNorm(1.0)); the schedule is stepped after every optimizer step
(optimizer() returns (optimizer, scheduler)): lr 0.01, 0.009, 0.0081 for updates 1..3.
Data: inputs(step): batch 32 from default_rng(3860 + step): features N(0, 1) [32, 10], exposure
U(0.5, 2), counts ~ Poisson(exposure * exp(eta)) with eta from a fixed teacher (default_rng(3899)).
Init: paddle.seed(3838); Linear weights N(0, 0.3), hidden biases N(0, 0.1), LayerNorm weight
1 + N(0, 0.1), bias N(0, 0.1), output bias 0.6 + N(0, 0.1) (about the log of the mean rate).

PADIFF_BUG (this side only):
  paddle_no_offset   -> the exposure offset forgotten: the loss is applied to log_rate itself
              (the model is then fitted to counts as if every exposure were 1)
  paddle_natural_exp -> NaturalExpDecay(0.01, gamma=0.9) where ExponentialDecay was meant:
              lr * exp(-0.9 t) instead of lr * 0.9 ** t (0.01, 0.00407, 0.00165)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_no_offset", "paddle_natural_exp"} | {"torch_rate_offbyone"}  # the torch side's, ignored here
N_FEAT, HIDDEN, BATCH = 10, 32, 32
DROP_RATES = (0.2, 0.1)
LR0, GAMMA, BETA1, BETA2, EPS, L2, MAX_NORM = 0.01, 0.9, 0.9, 0.999, 1e-8, 1e-3, 1.0

_DATA = {}


def teacher():
    rng = np.random.default_rng(3899)
    return rng.normal(0.0, 0.3, N_FEAT), 0.5


def sample(step):
    coef, base = teacher()
    rng = np.random.default_rng(3860 + step)
    x = rng.standard_normal((BATCH, N_FEAT))
    exposure = rng.uniform(0.5, 2.0, BATCH)
    eta = x @ coef + 0.2 * np.sin(x[:, 0] * x[:, 1]) + base
    counts = rng.poisson(exposure * np.exp(eta))
    return x.astype("float32"), exposure.astype("float32"), counts.astype("float32")


class PoissonRateMLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.mlp_stack = nn.Sequential(
            nn.Linear(N_FEAT, HIDDEN), nn.LayerNorm(HIDDEN), nn.GELU(), nn.Dropout(DROP_RATES[0]),
            nn.Linear(HIDDEN, HIDDEN), nn.LayerNorm(HIDDEN), nn.GELU(), nn.Dropout(DROP_RATES[1]))
        self.rate_out = nn.Linear(HIDDEN, 1)

    def forward(self, x):
        return self.rate_out(self.mlp_stack(x)).squeeze(-1)


def _trained_looking(m):
    paddle.seed(3838)
    for sub in m.sublayers():
        if isinstance(sub, nn.LayerNorm):
            sub.weight.set_value(1.0 + paddle.normal(0.0, 0.1, sub.weight.shape))
            sub.bias.set_value(paddle.normal(0.0, 0.1, sub.bias.shape))
        elif isinstance(sub, nn.Linear):
            sub.weight.set_value(paddle.normal(0.0, 0.3, sub.weight.shape))
            sub.bias.set_value(paddle.normal(0.0, 0.1, sub.bias.shape))
    m.rate_out.bias.set_value(0.6 + paddle.normal(0.0, 0.1, [1]))


def model():
    bug(BUGS)
    m = PoissonRateMLP()
    _trained_looking(m)
    m.train()
    return m


def inputs(step=0):
    x, exposure, counts = sample(step)
    _DATA.update(exposure=exposure, counts=counts)
    return (paddle.to_tensor(x),), {}


def loss(log_rate):
    dt = log_rate.dtype
    counts = paddle.to_tensor(_DATA["counts"]).astype(dt)
    if bug(BUGS) == "paddle_no_offset":
        eta = log_rate
    else:
        eta = log_rate + paddle.log(paddle.to_tensor(_DATA["exposure"]).astype(dt))
    return F.poisson_nll_loss(eta, counts, log_input=True, full=False, reduction="mean")


def optimizer(model):
    if bug(BUGS) == "paddle_natural_exp":
        sched = paddle.optimizer.lr.NaturalExpDecay(learning_rate=LR0, gamma=GAMMA)
    else:
        sched = paddle.optimizer.lr.ExponentialDecay(learning_rate=LR0, gamma=GAMMA)
    opt = paddle.optimizer.Adam(learning_rate=sched, beta1=BETA1, beta2=BETA2, epsilon=EPS,
                                parameters=model.parameters(), weight_decay=L2,
                                grad_clip=paddle.nn.ClipGradByGlobalNorm(MAX_NORM))
    return opt, sched
