"""Hand-written count-regression port in TRAINING mode, torch side ("person B", re-implemented from
the paddle original port_poisson_adam_explr_train_paddle.py).

    CountNet: registers log_rate (Linear 32 -> 1) FIRST, then hidden_layers (ModuleList of two
        DenseUnit built in a loop over the widths and per-layer dropout rates (0.2, 0.1):
        dense_map Linear, unit_norm LayerNorm, gelu GELU, dropper Dropout)
    forward(features) -> log_rate(h).squeeze(-1) [32]

Loss, written by hand: log_mu = log_rate + torch.log(exposure) (offset);
nll = torch.exp(log_mu) - counts * log_mu; loss = nll.mean().
Optimizer: torch.optim.Adam(lr 0.01, betas (0.9, 0.999), eps 1e-8, weight_decay 1e-3 (coupled
L2)), torch.optim.lr_scheduler.ExponentialLR(gamma 0.9) stepped after every optimizer step;
clip_grad(): torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0).
Data: the same batches as the paddle side (default_rng(3860 + step), teacher default_rng(3899)).

PADIFF_BUG (this side only):
  torch_rate_offbyone -> the loop building the hidden units reads the rate list one index
              behind (rates[i - 1]): unit 0 gets 0.1 (rates[-1]), unit 1 gets 0.2
"""
import numpy as np
import torch
from _train_common import bug
from torch import nn

BUGS = {"torch_rate_offbyone"} | {"paddle_no_offset", "paddle_natural_exp"}  # the paddle side's, ignored here
IN_FEATURES, WIDTHS, RATES = 10, (32, 32), (0.2, 0.1)
LR, GAMMA, BETAS, EPS, WEIGHT_DECAY, CLIP = 0.01, 0.9, (0.9, 0.999), 1e-8, 1e-3, 1.0

_BATCH = {}


def draw_batch(step, n=32):
    trng = np.random.default_rng(3899)
    w_true, intercept = trng.normal(0.0, 0.3, IN_FEATURES), 0.5
    rng = np.random.default_rng(3860 + step)
    feats = rng.standard_normal((n, IN_FEATURES))
    expo = rng.uniform(0.5, 2.0, n)
    lin = feats @ w_true + 0.2 * np.sin(feats[:, 0] * feats[:, 1]) + intercept
    y = rng.poisson(expo * np.exp(lin))
    return (torch.from_numpy(feats.astype(np.float32)), torch.from_numpy(expo.astype(np.float32)),
            torch.from_numpy(y.astype(np.float32)))


class DenseUnit(nn.Module):
    def __init__(self, fan_in, fan_out, p):
        super().__init__()
        self.dense_map = nn.Linear(fan_in, fan_out)
        self.unit_norm = nn.LayerNorm(fan_out)
        self.gelu = nn.GELU()
        self.dropper = nn.Dropout(p)

    def forward(self, x):
        return self.dropper(self.gelu(self.unit_norm(self.dense_map(x))))


class CountNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_rate = nn.Linear(WIDTHS[-1], 1)
        units, fan_in = [], IN_FEATURES
        for i, width in enumerate(WIDTHS):
            p = RATES[i - 1] if bug(BUGS) == "torch_rate_offbyone" else RATES[i]
            units.append(DenseUnit(fan_in, width, p))
            fan_in = width
        self.hidden_layers = nn.ModuleList(units)

    def forward(self, features):
        h = features
        for unit in self.hidden_layers:
            h = unit(h)
        return self.log_rate(h).squeeze(-1)


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = CountNet()
    m.train()
    return m


def inputs(step=0):
    feats, expo, y = draw_batch(step)
    _BATCH["exposure"], _BATCH["counts"] = expo, y
    return (feats,), {}


def loss(log_rate):
    dt = log_rate.dtype
    log_mu = log_rate + torch.log(_BATCH["exposure"].to(dt))
    nll = torch.exp(log_mu) - _BATCH["counts"].to(dt) * log_mu
    return nll.mean()


def optimizer(model):
    opt = torch.optim.Adam(model.parameters(), lr=LR, betas=BETAS, eps=EPS, weight_decay=WEIGHT_DECAY)
    return opt, torch.optim.lr_scheduler.ExponentialLR(opt, gamma=GAMMA)


def clip_grad(model):
    torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
