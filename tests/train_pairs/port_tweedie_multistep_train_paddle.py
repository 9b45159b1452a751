"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a small tabular
regressor for zero-inflated positive targets (claim amounts: compound Poisson-Gamma), trained
3 steps with the Tweedie deviance (power p = 1.3, log link), Adam and a multi-step decay.

    TweedieNet: registers out (Linear 16 -> 1) first, then region_emb (Embedding 5 x 4),
        inp (InputBlock), hidden (HiddenBlock); forward(x_num [32, 8], region [32]):
        inp(x_num, region_emb(region)), hidden, out, squeeze(-1)
    InputBlock: num_fc (Linear 8 -> 32), cat_fc (Linear 4 -> 32, bias_attr=False), norm
        (LayerNorm 32), drop (Dropout 0.2): drop(relu(norm(num_fc(x_num) + cat_fc(emb))))
        (the numeric and the categorical part projected separately and summed)
    HiddenBlock: fc (Linear 32 -> 16), norm (LayerNorm 16), drop (Dropout 0.1):
        drop(relu(norm(fc(h))))
    output: the linear predictor eta = log(mu) [32] (log link)

Data: inputs(step): 32 policies from default_rng(3960 + step): 8 standardised numeric features,
a region in 0..4; targets y ~ Tweedie(mu, p 1.3, phi 1) drawn as compound Poisson-Gamma
(N ~ Poisson(mu^(2-p) / (phi (2-p))), y = Gamma(N alpha, phi (p-1) mu^(p-1)), alpha =
(2-p)/(p-1)); true log mu linear in the features from default_rng(3959); 16-25 % zeros.
Loss: mean unit Tweedie deviance with mu = exp(eta):
  2 (y^(2-p) / ((1-p)(2-p)) - y mu^(1-p) / (1-p) + mu^(2-p) / (2-p))
Optimizer: Adam(beta1 0.9, beta2 0.999, epsilon 1e-8, weight_decay=1e-4: L2 added to the
gradient) with learning_rate = MultiStepDecay(0.01, milestones=[1, 2], gamma=0.5): lr 0.01, 0.005,
0.0025 for updates 1..3; optimizer() returns (optimizer, scheduler).
Dropout: the two nn.Dropout layers in train mode (p 0.2 after the input block, 0.1 after the
hidden block); the test harness makes them comparable with the torch side (off, or the same
masks per call).
Init: paddle.seed(0), paddle's default weights (Linear, Embedding); LayerNorm weight
1 + N(0, 0.1), bias N(0, 0.1); hidden Linear biases N(0, 0.1); the output bias set to log(1.1)
(the log of the portfolio's mean claim, the usual start).

PADIFF_BUG (this side only):
  paddle_power_default -> loss(): tweedie_deviance(y, eta) called without power=POWER: the
              helper's default 1.5 (LightGBM's / XGBoost's default variance power) is used
  paddle_dropout_copy -> the hidden block built with the input block's dropout rate (0.2
              instead of 0.1): a copy-pasted constructor call
"""
import math

import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_power_default", "paddle_dropout_copy"} | {"torch_gamma_default"}  # the torch side's, ignored here
BATCH, N_NUM, N_REGION, EMB, H1, H2 = 32, 8, 5, 4, 32, 16
POWER, PHI = 1.3, 1.0
DROP_IN, DROP_HID = 0.2, 0.1
LR, MILESTONES, GAMMA, WD = 0.01, [1, 2], 0.5, 1e-4

_BATCH = {}


def policies(step):
    """numpy: numeric features [32, 8], region ids [32], claim amounts [32]."""
    beta = np.random.default_rng(3959).normal(0.0, 0.3, N_NUM)
    region_eff = np.array([-0.4, -0.1, 0.0, 0.2, 0.5])
    rng = np.random.default_rng(3960 + step)
    x = rng.standard_normal((BATCH, N_NUM))
    region = rng.integers(0, N_REGION, BATCH)
    mu = np.exp(0.1 + x @ beta + region_eff[region])
    lam = mu ** (2 - POWER) / (PHI * (2 - POWER))
    alpha, scale = (2 - POWER) / (POWER - 1), PHI * (POWER - 1) * mu ** (POWER - 1)
    n = rng.poisson(lam)
    y = np.where(n > 0, rng.gamma(np.maximum(n, 1) * alpha, scale), 0.0)
    return x.astype("float32"), region.astype("int64"), y.astype("float32")


class InputBlock(nn.Layer):
    def __init__(self, p):
        super().__init__()
        self.num_fc = nn.Linear(N_NUM, H1)
        self.cat_fc = nn.Linear(EMB, H1, bias_attr=False)
        self.norm = nn.LayerNorm(H1)
        self.drop = nn.Dropout(p)

    def forward(self, x_num, emb):
        return self.drop(F.relu(self.norm(self.num_fc(x_num) + self.cat_fc(emb))))


class HiddenBlock(nn.Layer):
    def __init__(self, din, dout, p):
        super().__init__()
        self.fc = nn.Linear(din, dout)
        self.norm = nn.LayerNorm(dout)
        self.drop = nn.Dropout(p)

    def forward(self, h):
        return self.drop(F.relu(self.norm(self.fc(h))))


class TweedieNet(nn.Layer):
    def __init__(self, hidden_drop=DROP_HID):
        super().__init__()
        self.out = nn.Linear(H2, 1)
        self.region_emb = nn.Embedding(N_REGION, EMB)
        self.inp = InputBlock(DROP_IN)
        self.hidden = HiddenBlock(H1, H2, hidden_drop)

    def forward(self, x_num, region):
        h = self.inp(x_num, self.region_emb(region))
        return self.out(self.hidden(h)).squeeze(-1)


def model():
    b = bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = TweedieNet(hidden_drop=DROP_IN if b == "paddle_dropout_copy" else DROP_HID)
    for ln in (m.inp.norm, m.hidden.norm):
        c = ln.weight.shape[0]
        ln.weight.set_value(1.0 + paddle.normal(0.0, 0.1, [c]))
        ln.bias.set_value(paddle.normal(0.0, 0.1, [c]))
    for lin in (m.inp.num_fc, m.hidden.fc):
        lin.bias.set_value(paddle.normal(0.0, 0.1, lin.bias.shape))
    m.out.bias.set_value(paddle.full([1], math.log(1.1)))
    m.train()
    return m


def inputs(step=0):
    x, region, y = policies(step)
    _BATCH["y"] = y
    return (paddle.to_tensor(x), paddle.to_tensor(region)), {}


def tweedie_deviance(y, eta, power=1.5):
    """Mean unit Tweedie deviance, log link (eta = log mu), 1 < power < 2."""
    mu = paddle.exp(eta)
    p = power
    dev = 2.0 * (paddle.pow(y, 2.0 - p) / ((1.0 - p) * (2.0 - p))
                 - y * paddle.pow(mu, 1.0 - p) / (1.0 - p)
                 + paddle.pow(mu, 2.0 - p) / (2.0 - p))
    return dev.mean()


def loss(output):
    y = paddle.to_tensor(_BATCH["y"]).astype(output.dtype)
    if bug(BUGS) == "paddle_power_default":
        return tweedie_deviance(y, output)
    return tweedie_deviance(y, output, power=POWER)


def optimizer(model):
    sched = paddle.optimizer.lr.MultiStepDecay(learning_rate=LR, milestones=MILESTONES, gamma=GAMMA)
    params = [p for p in model.parameters() if not p.stop_gradient]
    opt = paddle.optimizer.Adam(learning_rate=sched, beta1=0.9, beta2=0.999, epsilon=1e-8,
                                parameters=params, weight_decay=WD)
    return opt, sched
