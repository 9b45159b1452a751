"""Hand-written port, paddle side: a neural ODE classifier (written by "person A", torchdiffeq /
FFJORD style).

Input (positional): `x` float32 [8, 6] (numpy rng seed 31, standard normal). Output: class
logits [8, 4].

Model:
- encoder: Linear(6, 16) -> LayerNorm(16, eps 1e-5) -> tanh;
- ODE dy/dt = f(t, y) on y in R^16, integrated from t = 0 to t = 1.5 with a fixed-step classic RK4
  solver, 3 steps of h = 0.5 (so f is evaluated 12 times per forward):
    k1 = f(t, y); k2 = f(t + h/2, y + h/2 k1); k3 = f(t + h/2, y + h/2 k2); k4 = f(t + h, y + h k3)
    y <- y + h/6 (k1 + 2 k2 + 2 k3 + k4)
- f(t, y) = L2(t, tanh(L1(t, y))), where each L is a "concat" linear: the time is concatenated
  to the input as an extra feature, COLUMN 0 (L1: 17 -> 32, L2: 33 -> 16);
- head: Linear(16, 4).

Paddle idioms on this side:
- root `NeuralODENet` registers `stem` (nn.Linear(6, 16)), `stem_norm` (nn.LayerNorm(16)),
  `ode_block` and `head`; the tanh is inline F.tanh.
- `ODEBlock` is the SOLVER module: it owns `odefunc` and runs the RK4 loop in its forward; the
  time t is a Python float.
- `ODEFunc` registers `layer1`, `layer2` (ConcatLinear) and calls them as (t, x); its tanh is
  inline F.tanh.
- `ConcatLinear` builds the time column with paddle.full_like and calls its `_layer`
  nn.Linear(in + 1, out) on concat([t, x]).
- model() gives the LayerNorm and all biases trained-looking values and the time rows of the
  concat linears a larger scale (numpy rng seed 41), so that the time input matters.

The torch side (port_neural_ode_torch.py) was written independently: the RK4 loop is inline in
a feature-extractor module's forward (no solver module), the time grid is a buffer, and time
enters each dynamics layer ADDITIVELY (Linear(y) + t * a learned vector), not as a column.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_rk4_38_rule      -> ODEBlock integrates with Kutta's 3/8 rule instead of the classic
                             RK4 (stages at t + h/3, t + 2h/3, t + h; weights 1/8, 3/8, 3/8,
                             1/8): also 4th order, so the result moves only slightly;
                             precision-level
  paddle_time_column_last -> ConcatLinear concatenates the time as the LAST column (concat([x,
                             t])) while the weights have it as row 0
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IN_DIM, DIM, HIDDEN, N_CLASSES = 6, 16, 32, 4
T1, STEPS = 1.5, 3
BATCH = 8
OWN_BUGS = {"paddle_rk4_38_rule", "paddle_time_column_last"}
OTHER_BUGS = {"torch_stage_time_full_step", "torch_dynamics_output_tanh"}


class ConcatLinear(nn.Layer):
    def __init__(self, dim_in, dim_out, time_last=False):
        super().__init__()
        self.time_last = time_last
        self._layer = nn.Linear(dim_in + 1, dim_out)

    def forward(self, t, x):
        tt = paddle.full_like(x[:, :1], t)
        ttx = paddle.concat([x, tt], axis=1) if self.time_last else paddle.concat([tt, x], axis=1)
        return self._layer(ttx)


class ODEFunc(nn.Layer):
    def __init__(self, dim, hidden, time_last=False):
        super().__init__()
        self.layer1 = ConcatLinear(dim, hidden, time_last)
        self.layer2 = ConcatLinear(hidden, dim, time_last)

    def forward(self, t, x):
        return self.layer2(t, F.tanh(self.layer1(t, x)))


class ODEBlock(nn.Layer):
    def __init__(self, odefunc, t1=T1, steps=STEPS, rule="classic"):
        super().__init__()
        self.odefunc = odefunc
        self.t1, self.steps, self.rule = t1, steps, rule

    def _rk4_step(self, t, h, y):
        f = self.odefunc
        if self.rule == "3/8":
            k1 = f(t, y)
            k2 = f(t + h / 3, y + h * k1 / 3)
            k3 = f(t + 2 * h / 3, y + h * (k2 - k1 / 3))
            k4 = f(t + h, y + h * (k1 - k2 + k3))
            return y + h / 8 * (k1 + 3 * k2 + 3 * k3 + k4)
        k1 = f(t, y)
        k2 = f(t + h / 2, y + h / 2 * k1)
        k3 = f(t + h / 2, y + h / 2 * k2)
        k4 = f(t + h, y + h * k3)
        return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    def forward(self, x):
        h = self.t1 / self.steps
        y = x
        for i in range(self.steps):
            y = self._rk4_step(i * h, h, y)
        return y


class NeuralODENet(nn.Layer):
    def __init__(self, rule="classic", time_last=False):
        super().__init__()
        self.stem = nn.Linear(IN_DIM, DIM)
        self.stem_norm = nn.LayerNorm(DIM, epsilon=1e-5)
        self.ode_block = ODEBlock(ODEFunc(DIM, HIDDEN, time_last), rule=rule)
        self.head = nn.Linear(DIM, N_CLASSES)

    def forward(self, x):
        y = F.tanh(self.stem_norm(self.stem(x)))
        y = self.ode_block(y)
        return self.head(y)


def _trained_look(m):
    rng = np.random.default_rng(41)
    m.stem_norm.weight.set_value(rng.uniform(0.6, 1.4, DIM).astype("float32"))
    m.stem_norm.bias.set_value(rng.normal(0.0, 0.2, DIM).astype("float32"))
    for lin in (m.stem, m.ode_block.odefunc.layer1._layer, m.ode_block.odefunc.layer2._layer, m.head):
        lin.bias.set_value(rng.normal(0.0, 0.2, lin.bias.shape).astype("float32"))
    for cl in (m.ode_block.odefunc.layer1, m.ode_block.odefunc.layer2):
        w = cl._layer.weight.numpy().copy()  # [1 + in, out], row 0 = time
        w[0] = rng.normal(0.0, 0.8, w.shape[1])
        cl._layer.weight.set_value(w.astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_neural_ode paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = NeuralODENet(rule="3/8" if bug == "paddle_rk4_38_rule" else "classic",
                     time_last=bug == "paddle_time_column_last")
    _trained_look(m)
    m.eval()
    return m


def _x():
    return np.random.default_rng(31).standard_normal((BATCH, IN_DIM)).astype("float32")


def inputs():
    return (paddle.to_tensor(_x()),), {}


def loss(output):
    # logits [8, 4] against fixed labels: cross-entropy
    labels = paddle.to_tensor(np.array([0, 1, 2, 3, 3, 2, 1, 0], dtype="int64"))
    return F.cross_entropy(output, labels)
