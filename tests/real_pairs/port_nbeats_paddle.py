"""Hand-written port, paddle side: a tiny N-BEATS forecaster (written by "person A").

Input: a batch of 4 univariate look-back windows x [4, 16] (positional; numpy rng seed 34: a
sine of period 8 plus a slope plus N(0, 0.2) noise, different phase per row). Output: the
forecast [4, 4] (horizon 4).

Doubly-residual stacking over four blocks, called in this order:
  trend block, seasonality block, generic block, generic block
  residual = x, forecast = 0; per block: b, f = block(residual); residual -= b; forecast += f
Every block: a 4-layer ReLU MLP (16 -> 32 -> 32 -> 32 -> 32, ReLU after every layer), then
theta, split into theta_b | theta_f, then a basis:
  generic      theta 8 | 8 (with bias); backcast = Linear(8, 16), forecast = Linear(8, 4)
  trend        theta 3 | 3 (no bias); polynomial basis T[i, t] = (t / len) ** i, i = 0, 1, 2,
               t = 0..len-1 (len 16 for the backcast, 4 for the forecast); out = theta @ T
  seasonality  theta 5 | 5 (no bias); Fourier basis rows [1, cos(2 pi t'), cos(4 pi t'),
               sin(2 pi t'), sin(4 pi t')], t' = t / len; out = theta @ S

Paddle idioms on this side:
- root `NBeatsNet`: `blocks` = LayerList [TrendBlock, SeasonalityBlock, GenericBlock,
  GenericBlock] (iterated, never called); the doubly-residual bookkeeping is inline.
- every block derives from `NBeatsBlock`: `fc_stack` (LayerList of 4 Linear, F.relu inline) and
  ONE packed `theta` Linear(32, nb + nf) whose output is sliced [:, :nb] / [:, nb:].
- `GenericBlock` adds `backcast_head` / `forecast_head` Linears.
- `TrendBlock` registers its polynomial bases as (persistable) buffers `backcast_basis` [3, 16]
  and `forecast_basis` [3, 4] in __init__.
- `SeasonalityBlock` computes its Fourier bases INLINE in every forward (module-level helper
  `fourier_basis`, no buffer).
- model() gives every bias trained-looking non-zero values (seeded).

The torch side (port_nbeats_torch.py) was written independently (philipperemy style): a
Sequential MLP with ReLU modules, separate theta_b_fc / theta_f_fc Linears, the trend basis
computed inline, the seasonality basis as buffers, and a different registration order.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_generic_theta_relu -> the generic block applies F.relu to theta before the basis
                               Linears (copied from a popular re-implementation; the paper's
                               theta is linear)
  paddle_season_pi_rounded  -> `fourier_basis` uses PI = 3.14 instead of math.pi
                               (precision-level)
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

BACKCAST, HORIZON, HIDDEN, N_LAYERS = 16, 4, 32, 4
GENERIC_THETA, TREND_DEGREE, HARMONICS = 8, 2, 2
BATCH = 4
OWN_BUGS = {"paddle_generic_theta_relu", "paddle_season_pi_rounded"}
OTHER_BUGS = {"torch_trend_forecast_t", "torch_fc_last_relu"}
PI = math.pi


def fourier_basis(length, pi=None):
    pi = PI if pi is None else pi
    t = paddle.arange(length, dtype="float32") / length
    rows = [paddle.ones([length], dtype="float32")]
    rows += [paddle.cos(2 * pi * k * t) for k in range(1, HARMONICS + 1)]
    rows += [paddle.sin(2 * pi * k * t) for k in range(1, HARMONICS + 1)]
    return paddle.stack(rows)  # [2 * HARMONICS + 1, length]


def poly_basis(length):
    t = np.arange(length, dtype="float64") / length
    return np.stack([t**i for i in range(TREND_DEGREE + 1)]).astype("float32")  # [degree + 1, length]


class NBeatsBlock(nn.Layer):
    def __init__(self, nb, nf, theta_bias):
        super().__init__()
        self.nb = nb
        self.fc_stack = nn.LayerList(
            [nn.Linear(BACKCAST if i == 0 else HIDDEN, HIDDEN) for i in range(N_LAYERS)])
        self.theta = nn.Linear(HIDDEN, nb + nf, bias_attr=None if theta_bias else False)

    def _thetas(self, x):
        h = x
        for fc in self.fc_stack:
            h = F.relu(fc(h))
        theta = self.theta(h)
        return theta[:, :self.nb], theta[:, self.nb:]


class GenericBlock(NBeatsBlock):
    def __init__(self, theta_relu=False):
        super().__init__(GENERIC_THETA, GENERIC_THETA, theta_bias=True)
        self.theta_relu = theta_relu
        self.backcast_head = nn.Linear(GENERIC_THETA, BACKCAST)
        self.forecast_head = nn.Linear(GENERIC_THETA, HORIZON)

    def forward(self, x):
        tb, tf = self._thetas(x)
        if self.theta_relu:
            tb, tf = F.relu(tb), F.relu(tf)
        return self.backcast_head(tb), self.forecast_head(tf)


class TrendBlock(NBeatsBlock):
    def __init__(self):
        super().__init__(TREND_DEGREE + 1, TREND_DEGREE + 1, theta_bias=False)
        self.register_buffer("backcast_basis", paddle.to_tensor(poly_basis(BACKCAST)))
        self.register_buffer("forecast_basis", paddle.to_tensor(poly_basis(HORIZON)))

    def forward(self, x):
        tb, tf = self._thetas(x)
        return paddle.matmul(tb, self.backcast_basis), paddle.matmul(tf, self.forecast_basis)


class SeasonalityBlock(NBeatsBlock):
    def __init__(self, pi=None):
        super().__init__(2 * HARMONICS + 1, 2 * HARMONICS + 1, theta_bias=False)
        self.pi = pi

    def forward(self, x):
        tb, tf = self._thetas(x)
        return (paddle.matmul(tb, fourier_basis(BACKCAST, self.pi)),
                paddle.matmul(tf, fourier_basis(HORIZON, self.pi)))


class NBeatsNet(nn.Layer):
    def __init__(self, theta_relu=False, pi=None):
        super().__init__()
        self.blocks = nn.LayerList([TrendBlock(), SeasonalityBlock(pi), GenericBlock(theta_relu),
                                    GenericBlock(theta_relu)])

    def forward(self, x):
        residual = x
        forecast = paddle.zeros([x.shape[0], HORIZON], dtype=x.dtype)
        for block in self.blocks:
            backcast, block_forecast = block(residual)
            residual = residual - backcast
            forecast = forecast + block_forecast
        return forecast


def _trained_look(m):
    rng = np.random.default_rng(134)
    for _name, p in m.named_parameters():
        if _name.endswith("bias"):
            p.set_value(rng.normal(0.0, 0.1, p.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_nbeats paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = NBeatsNet(theta_relu=bug == "paddle_generic_theta_relu",
                  pi=3.14 if bug == "paddle_season_pi_rounded" else None)
    _trained_look(m)
    m.eval()
    return m


def _series():
    rng = np.random.default_rng(34)
    t = np.arange(BACKCAST)[None, :]
    phase = rng.uniform(0, 2 * np.pi, (BATCH, 1))
    slope = rng.normal(0.0, 0.1, (BATCH, 1))
    x = np.sin(2 * np.pi * t / 8 + phase) + slope * t + rng.normal(0.0, 0.2, (BATCH, BACKCAST))
    return x.astype("float32")


def inputs():
    return (paddle.to_tensor(_series()),), {}


def loss(output):
    # forecast [4, 4]
    return (output**2).mean()
