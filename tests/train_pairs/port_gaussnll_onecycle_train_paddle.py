"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a heteroscedastic
regression MLP that predicts a mean and a variance per sample (MC-dropout style trunk), trained 3
steps with the Gaussian negative log likelihood, SGD with Nesterov momentum and a one-cycle
learning-rate schedule.

    HeteroscedasticMLP: registers trunk = Sequential(Linear(6, 32), LayerNorm(32), GELU,
        Dropout(0.1), Linear(32, 32), GELU, Dropout(0.1)) (.0-.6), mean_head (Linear 32 -> 1),
        var_head (Linear 32 -> 1)
    forward(x) -> (mean [B, 1], variance [B, 1] = softplus(var_head(h)) + 1e-6)
Batch 16 per step from default_rng(9600 + step): features N(0, 1) [16, 6], targets [16, 1]
(a smooth function of the features plus noise whose scale grows with |x_1|); model.train().

Loss: the Gaussian NLL written out, gaussian_nll(mean, target, variance) =
mean(0.5 * (log(v) + (mean - target)^2 / v)), v = clip(variance, min=1e-6), without the constant
0.5 log(2 pi) (torch's GaussianNLLLoss defaults: full=False, eps=1e-6, reduction "mean"; paddle's
F.gaussian_nll_loss has the same defaults and formula). Written by hand because paddle 3.3.1's
F.gaussian_nll_loss returns no gradient for the variance: it replaces the variance by
paddle.clip(variance) computed under paddle.no_grad() (a new tensor, not an in-place clamp as in
torch), so the variance head would never learn. The variance here is softplus(.) + 1e-6 >= 1e-6,
so the clip never binds and its gradient is the identity (torch's clamp_ under no_grad: identity
everywhere).
Optimizer: Momentum(momentum 0.9, use_nesterov=True) driven by
OneCycleLR(max_learning_rate 0.05, total_steps 5, divide_factor 25, end_learning_rate 1e-4,
phase_pct 0.3, anneal_strategy "cos", two phases): lr 0.002, 0.0475, 0.0306 for updates 1..3.
paddle's end_learning_rate is an absolute lr (default 1e-4); paddle's OneCycleLR does not touch
the momentum (constant 0.9).
Init: paddle.seed(0); linear weights N(0, 0.25), biases N(0, 0.1), LayerNorm weight
1 + N(0, 0.1), bias N(0, 0.1) (_train_common.randomize_paddle).

PADIFF_BUG (this side only):
  paddle_keep_prob -> the trunk's dropouts built with the reference's keep probability (0.9,
              a TF "keep_prob") as paddle's drop probability p
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug, randomize_paddle
from paddle import nn

BUGS = {"paddle_keep_prob"} | {"torch_target_broadcast", "cycle_momentum_default"}  # torch side's, ignored here
N_IN, HIDDEN, BATCH = 6, 32, 16
DROP_P, KEEP_PROB = 0.1, 0.9
MIN_VAR = 1e-6
MAX_LR, TOTAL_STEPS, DIVIDE, END_LR, PHASE_PCT, MOMENTUM = 0.05, 5, 25.0, 1e-4, 0.3, 0.9

_Y = {}


def batch(step):
    rng = np.random.default_rng(9600 + step)
    x = rng.standard_normal((BATCH, N_IN)).astype("float32")
    f = x @ np.linspace(-0.8, 0.8, N_IN) + 0.5 * np.sin(2.0 * x[:, 0])
    noise = (0.2 + 0.6 * np.abs(x[:, 1])) * rng.standard_normal(BATCH)
    return x, (f + noise).astype("float32")[:, None]


class HeteroscedasticMLP(nn.Layer):
    def __init__(self):
        super().__init__()
        p = KEEP_PROB if bug(BUGS) == "paddle_keep_prob" else DROP_P
        self.trunk = nn.Sequential(
            nn.Linear(N_IN, HIDDEN), nn.LayerNorm(HIDDEN), nn.GELU(), nn.Dropout(p),
            nn.Linear(HIDDEN, HIDDEN), nn.GELU(), nn.Dropout(p),
        )
        self.mean_head = nn.Linear(HIDDEN, 1)
        self.var_head = nn.Linear(HIDDEN, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.mean_head(h), F.softplus(self.var_head(h)) + MIN_VAR


def model():
    bug(BUGS)
    paddle.seed(0)
    m = HeteroscedasticMLP()
    randomize_paddle(m, std=0.25, seed=0)
    m.train()
    return m


def inputs(step=0):
    x, y = batch(step)
    _Y["y"] = y
    return (paddle.to_tensor(x),), {}


def gaussian_nll(mean, target, var, epsilon=MIN_VAR):
    var = paddle.clip(var, min=epsilon)
    return paddle.mean(0.5 * (paddle.log(var) + paddle.square(mean - target) / var))


def loss(output):
    mean, var = output
    y = paddle.to_tensor(_Y["y"]).astype(mean.dtype)
    return gaussian_nll(mean, y, var)


def optimizer(model):
    sched = paddle.optimizer.lr.OneCycleLR(max_learning_rate=MAX_LR, total_steps=TOTAL_STEPS,
                                           divide_factor=DIVIDE, end_learning_rate=END_LR,
                                           phase_pct=PHASE_PCT, anneal_strategy="cos")
    opt = paddle.optimizer.Momentum(learning_rate=sched, momentum=MOMENTUM, use_nesterov=True,
                                    parameters=model.parameters())
    return opt, sched
