"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_pinball_adamw_poly_train_paddle.py).

    QuantileMLP: registers input_proj (Linear 8 -> 32), layers (ModuleList of 2 ResidualMLP),
        norm_out (LayerNorm 32), head (ONE Linear 32 -> 3: the three quantile heads fused)
    ResidualMLP: registers ln (LayerNorm 32), ff (Linear 32 -> 32); forward x + ff(gelu(ln(x)))
        (F.gelu inline; no dropout module: the reference runs with dropout 0)
    forward(x) -> head(gelu(norm_out(h))): [32, 3]

Loss (written by hand, per quantile): errors_i = target - preds[:, i];
max((q_i - 1) errors_i, q_i errors_i); mean over batch and quantiles.
Optimizer: torch.optim.AdamW(lr 0.01, betas (0.9, 0.999), eps 1e-8) with two parameter groups
(weight_decay 0.01 for p.dim() > 1, 0.0 otherwise), and a hand-written schedule
LambdaLR(lr_lambda): step 0 -> 0.2 (warmup from 0.002), then
(1 - 1e-4 / 0.01) (1 - min(step - 1, 4) / 4) ** 2 + 1e-4 / 0.01 (polynomial decay to 1e-4);
returned with the optimizer and stepped after every optimizer step.
Data: the same samples as the paddle side (default_rng(4200 + step), the same recipe).

PADIFF_BUG (this side only):
  torch_residual_sign -> errors_i = preds[:, i] - target (the residual subtracted the wrong
              way: quantile q is fitted as 1 - q)
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_residual_sign"} | {"paddle_dropout_default", "paddle_decay_names"}  # the paddle side's, ignored here
N_IN, D, N = 8, 32, 32
QUANTILES = [0.1, 0.5, 0.9]
N_QUANTILES = len(QUANTILES)
LR, LR_END, WARMUP_STEPS, DECAY_STEPS, POWER, WARMUP_START = 1e-2, 1e-4, 1, 4, 2.0, 0.2

_DATA = {}


def load_batch(step):
    rng = np.random.default_rng(4200 + step)
    x = rng.uniform(-1.0, 1.0, (N, N_IN))
    eps = rng.standard_normal(N)
    scale = 0.2 + 0.3 * np.abs(x[:, 3])
    y = np.sin(2.0 * x[:, 0]) + 0.5 * x[:, 1] * x[:, 2] + scale * eps
    return x.astype(np.float32), y.astype(np.float32)


class ResidualMLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.ff = nn.Linear(d, d)

    def forward(self, x):
        return x + self.ff(F.gelu(self.ln(x)))


class QuantileMLP(nn.Module):
    def __init__(self, n_in=N_IN, d=D, n_layers=2, n_quantiles=N_QUANTILES):
        super().__init__()
        self.input_proj = nn.Linear(n_in, d)
        self.layers = nn.ModuleList([ResidualMLP(d) for _ in range(n_layers)])
        self.norm_out = nn.LayerNorm(d)
        self.head = nn.Linear(d, n_quantiles)

    def forward(self, x):
        h = self.input_proj(x)
        for layer in self.layers:
            h = layer(h)
        return self.head(F.gelu(self.norm_out(h)))


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = QuantileMLP()
    m.train()
    return m


def inputs(step=0):
    x, y = load_batch(step)
    _DATA["target"] = torch.from_numpy(y)
    return (torch.from_numpy(x),), {}


def loss(output):
    preds = output
    target = _DATA["target"].to(preds.dtype)
    flip = bug(BUGS) == "torch_residual_sign"
    losses = []
    for i, q in enumerate(QUANTILES):
        errors = preds[:, i] - target if flip else target - preds[:, i]
        losses.append(torch.max((q - 1) * errors, q * errors).unsqueeze(1))
    return torch.mean(torch.cat(losses, dim=1))


def lr_lambda(step):
    if step < WARMUP_STEPS:
        return WARMUP_START + (1.0 - WARMUP_START) * step / WARMUP_STEPS
    progress = min(step - WARMUP_STEPS, DECAY_STEPS) / DECAY_STEPS
    end = LR_END / LR
    return (1.0 - end) * (1.0 - progress) ** POWER + end


def optimizer(model):
    decay = [p for p in model.parameters() if p.dim() > 1]
    no_decay = [p for p in model.parameters() if p.dim() <= 1]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=LR, betas=(0.9, 0.999), eps=1e-8)
    return opt, torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda)
