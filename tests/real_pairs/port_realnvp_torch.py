"""Hand-written port, torch side: a tiny RealNVP normalizing flow on 8-dim vectors (written by "person B").

The same flow as port_realnvp_paddle.py, re-implemented by hand without masks: four affine
couplings on x [4, 8]; each coupling keeps the first half x[:, :4] and transforms the second
half x[:, 4:] as  y_b = x_b * exp(s) + t,  s = log_scale * tanh(s_raw),  log_det += sum(s);
after EVERY coupling the vector is flipped (torch.flip on dim 1), so the next coupling
conditions on the other half (in reversed order), and after the four flips the order is the
original one again. Returns (z [4, 8], log_det [4]); `loss` is mean(0.5 * |z|^2 - log_det).

Torch idioms on this side:
- root `Flow`: `flows` = ModuleList of `AffineCoupling`; log_det starts as x.new_zeros.
- `AffineCoupling`: `net` = nn.Sequential(Linear(4, 32), LeakyReLU(0.2), Linear(32, 32),
  LeakyReLU(0.2), Linear(32, 8)) whose 8 outputs are PACKED s_raw | t (chunk(2, dim=1));
  `log_scale` nn.Parameter [4] registered after `net`.

Planted bug (PADIFF_BUG), see port_realnvp_truth.json; the paddle side's bug names are accepted
and ignored, any other name raises ValueError:
  torch_exp_neg_s -> the transformed half is computed as x_b * exp(-s) + t (the sign of the
                     inverse pass) while log_det still adds +s, in every coupling
"""
import os

import numpy as np
import torch
from torch import nn

DIM, HIDDEN, N_COUPLINGS = 8, 32, 4
BATCH = 4
OWN_BUGS = {"torch_exp_neg_s"}
OTHER_BUGS = {"paddle_mask_not_alternated", "paddle_leaky_default_slope"}


class AffineCoupling(nn.Module):
    def __init__(self, neg_s=False):
        super().__init__()
        half = DIM // 2
        self.neg_s = neg_s
        self.net = nn.Sequential(
            nn.Linear(half, HIDDEN),
            nn.LeakyReLU(0.2),
            nn.Linear(HIDDEN, HIDDEN),
            nn.LeakyReLU(0.2),
            nn.Linear(HIDDEN, 2 * half),
        )
        self.log_scale = nn.Parameter(torch.ones(half))

    def forward(self, x):
        half = x.shape[1] // 2
        xa, xb = x[:, :half], x[:, half:]
        s, t = self.net(xa).chunk(2, dim=1)
        s = self.log_scale * torch.tanh(s)
        yb = xb * torch.exp(-s if self.neg_s else s) + t
        return torch.cat([xa, yb], dim=1), s.sum(dim=1)


class Flow(nn.Module):
    def __init__(self, neg_s=False):
        super().__init__()
        self.flows = nn.ModuleList([AffineCoupling(neg_s) for _ in range(N_COUPLINGS)])

    def forward(self, x):
        log_det = x.new_zeros(x.shape[0])
        for flow in self.flows:
            x, ld = flow(x)
            log_det = log_det + ld
            x = torch.flip(x, dims=[1])
        return x, log_det


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_realnvp torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    return Flow(neg_s=bug == "torch_exp_neg_s").eval()


def _data():
    rng = np.random.default_rng(21)
    a = rng.standard_normal((DIM, DIM)) * 0.5 + np.eye(DIM)
    return (rng.standard_normal((BATCH, DIM)) @ a).astype("float32")


def inputs():
    return (torch.from_numpy(_data()),), {}


def loss(output):
    z, log_det = output
    return (0.5 * (z**2).sum(dim=1) - log_det).mean()
