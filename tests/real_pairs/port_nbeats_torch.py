"""Hand-written port, torch side: a tiny N-BEATS forecaster (written by "person B").

The same math as port_nbeats_paddle.py, re-implemented by hand in the style of the
philipperemy n-beats code: look-back x [4, 16] (positional), forecast [4, 4].

Blocks are called trend -> seasonality -> generic -> generic with doubly-residual stacking
(residual -= backcast, forecast += block forecast). Each block: 4 x (Linear + ReLU), then theta
for the backcast and for the forecast, then a basis (generic: Linears 8 -> 16 / 8 -> 4; trend:
polynomial (t / len) ** i, i < 3; seasonality: Fourier [1, cos 2 pi t', cos 4 pi t', sin 2 pi t',
sin 4 pi t']).

Torch idioms on this side:
- root `NBeats` registers `generic_blocks` (nn.ModuleList of two GenericBlock) FIRST, then
  `seasonality_block`, then `trend_block`, and calls trend, seasonality, generic 0, generic 1.
- every block derives from `Block`: `fc` = nn.Sequential(Linear, ReLU, Linear, ReLU, Linear,
  ReLU, Linear, ReLU) built by `_mlp`, and TWO theta Linears `theta_b_fc` / `theta_f_fc`
  (separate weights; no bias for trend / seasonality).
- `GenericBlock` adds `backcast_fc` (8 -> 16) and `forecast_fc` (8 -> 4).
- `TrendBlock` computes its polynomial bases INLINE in every forward (torch.arange, no buffer).
- `SeasonalityBlock` registers its Fourier bases as non-persistent buffers `S_backcast` [5, 16]
  and `S_forecast` [5, 4] (numpy, math.pi) in __init__.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_trend_forecast_t -> the trend forecast basis uses t = arange(4) / 16 (the backcast
                            length) instead of arange(4) / 4
  torch_fc_last_relu     -> `_mlp` drops the ReLU after the last Linear ("no activation on the
                            output layer" habit), in every block
"""
import math
import os

import numpy as np
import torch
from torch import nn

BACKCAST_LENGTH, FORECAST_LENGTH, UNITS = 16, 4, 32
THETA_DIM, POLY_DEGREE, NB_HARMONICS = 8, 2, 2
BATCH = 4
OWN_BUGS = {"torch_trend_forecast_t", "torch_fc_last_relu"}
OTHER_BUGS = {"paddle_generic_theta_relu", "paddle_season_pi_rounded"}


def _mlp(last_relu=True):
    layers = []
    for i in range(4):
        layers.append(nn.Linear(BACKCAST_LENGTH if i == 0 else UNITS, UNITS))
        if i < 3 or last_relu:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class Block(nn.Module):
    def __init__(self, theta_dim, theta_bias, last_relu=True):
        super().__init__()
        self.fc = _mlp(last_relu)
        self.theta_b_fc = nn.Linear(UNITS, theta_dim, bias=theta_bias)
        self.theta_f_fc = nn.Linear(UNITS, theta_dim, bias=theta_bias)

    def thetas(self, x):
        h = self.fc(x)
        return self.theta_b_fc(h), self.theta_f_fc(h)


class GenericBlock(Block):
    def __init__(self, last_relu=True):
        super().__init__(THETA_DIM, True, last_relu)
        self.backcast_fc = nn.Linear(THETA_DIM, BACKCAST_LENGTH)
        self.forecast_fc = nn.Linear(THETA_DIM, FORECAST_LENGTH)

    def forward(self, x):
        theta_b, theta_f = self.thetas(x)
        return self.backcast_fc(theta_b), self.forecast_fc(theta_f)


class TrendBlock(Block):
    def __init__(self, last_relu=True, forecast_t_bug=False):
        super().__init__(POLY_DEGREE + 1, False, last_relu)
        self.forecast_t_bug = forecast_t_bug

    @staticmethod
    def _poly(n, denom, device):
        t = torch.arange(n, dtype=torch.float32, device=device) / denom
        return torch.stack([t**p for p in range(POLY_DEGREE + 1)])

    def forward(self, x):
        theta_b, theta_f = self.thetas(x)
        T_b = self._poly(BACKCAST_LENGTH, BACKCAST_LENGTH, x.device)
        T_f = self._poly(FORECAST_LENGTH, BACKCAST_LENGTH if self.forecast_t_bug else FORECAST_LENGTH, x.device)
        return theta_b @ T_b, theta_f @ T_f


def _fourier(n):
    t = np.arange(n) / n
    cos = [np.cos(2 * math.pi * k * t) for k in range(1, NB_HARMONICS + 1)]
    sin = [np.sin(2 * math.pi * k * t) for k in range(1, NB_HARMONICS + 1)]
    return torch.tensor(np.stack([np.ones(n)] + cos + sin), dtype=torch.float32)


class SeasonalityBlock(Block):
    def __init__(self, last_relu=True):
        super().__init__(2 * NB_HARMONICS + 1, False, last_relu)
        self.register_buffer("S_backcast", _fourier(BACKCAST_LENGTH), persistent=False)
        self.register_buffer("S_forecast", _fourier(FORECAST_LENGTH), persistent=False)

    def forward(self, x):
        theta_b, theta_f = self.thetas(x)
        return theta_b @ self.S_backcast, theta_f @ self.S_forecast


class NBeats(nn.Module):
    def __init__(self, last_relu=True, forecast_t_bug=False):
        super().__init__()
        self.generic_blocks = nn.ModuleList([GenericBlock(last_relu) for _ in range(2)])
        self.seasonality_block = SeasonalityBlock(last_relu)
        self.trend_block = TrendBlock(last_relu, forecast_t_bug)

    def forward(self, backcast):
        forecast = torch.zeros(backcast.shape[0], FORECAST_LENGTH, dtype=backcast.dtype)
        for block in (self.trend_block, self.seasonality_block, *self.generic_blocks):
            b, f = block(backcast)
            backcast = backcast - b
            forecast = forecast + f
        return forecast


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_nbeats torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = NBeats(last_relu=bug != "torch_fc_last_relu", forecast_t_bug=bug == "torch_trend_forecast_t")
    return m.eval()


def _series():
    rng = np.random.default_rng(34)
    t = np.arange(BACKCAST_LENGTH)[None, :]
    phase = rng.uniform(0, 2 * np.pi, (BATCH, 1))
    slope = rng.normal(0.0, 0.1, (BATCH, 1))
    x = np.sin(2 * np.pi * t / 8 + phase) + slope * t + rng.normal(0.0, 0.2, (BATCH, BACKCAST_LENGTH))
    return x.astype("float32")


def inputs():
    return (torch.from_numpy(_series()),), {}


def loss(output):
    # forecast [4, 4]
    return (output**2).mean()
