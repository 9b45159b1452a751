"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_tweedie_multistep_train_paddle.py): a tabular Tweedie regressor, 3 steps.

    TabularTweedie: registers emb (Embedding 5 x 4), mlp = Sequential(Linear 12 -> 32,
        LayerNorm 32, ReLU, Dropout 0.2, Linear 32 -> 16, LayerNorm 16, ReLU, Dropout 0.1)
        (.0-.7), head (Linear 16 -> 1)
    forward(region [32], x_num [32, 8]) (keyword inputs): one Linear over
        torch.cat([emb(region), x_num], dim=1) (embedding columns first), mlp, head, squeeze(-1)
        -> the log of the expected claim, [32]

Loss: the Tweedie deviance written in the exp form of the log link (as in LightGBM's / the
glum docs' derivation): with eta = log mu, mu^(1-p) = exp((1-p) eta), mu^(2-p) = exp((2-p) eta);
mean of 2 (y^(2-p) / ((1-p)(2-p)) - y exp((1-p) eta) / (1-p) + exp((2-p) eta) / (2-p)), p 1.3.
Optimizer: Adam(lr 0.01, betas (0.9, 0.999), eps 1e-8, weight_decay 1e-4 (coupled L2)) and
MultiStepLR(milestones=[1, 2], gamma=0.5) stepped after every update: lr 0.01, 0.005, 0.0025;
optimizer() returns (optimizer, scheduler).
Data: the same policies as the paddle side (default_rng(3960 + step), coefficients
default_rng(3959), drawn by the same recipe).

PADIFF_BUG (this side only):
  torch_gamma_default -> MultiStepLR(opt, milestones=[1, 2]) without gamma: torch's default 0.1,
              so lr 0.01, 0.001, 0.0001 instead of 0.01, 0.005, 0.0025
"""
import numpy as np
import torch
from _train_common import bug
from torch import nn

BUGS = {"torch_gamma_default"} | {"paddle_power_default", "paddle_dropout_copy"}  # the paddle side's, ignored here
N_ROWS, N_NUM, N_REGION, EMB_DIM = 32, 8, 5, 4
P, PHI = 1.3, 1.0

_DATA = {}


def sample_policies(step):
    coef = np.random.default_rng(3959).normal(0.0, 0.3, N_NUM)
    region_effect = np.array([-0.4, -0.1, 0.0, 0.2, 0.5])
    rng = np.random.default_rng(3960 + step)
    x = rng.standard_normal((N_ROWS, N_NUM))
    region = rng.integers(0, N_REGION, N_ROWS)
    mu = np.exp(0.1 + x @ coef + region_effect[region])
    poisson_rate = mu ** (2 - P) / (PHI * (2 - P))
    shape, scale = (2 - P) / (P - 1), PHI * (P - 1) * mu ** (P - 1)
    counts = rng.poisson(poisson_rate)
    y = np.where(counts > 0, rng.gamma(np.maximum(counts, 1) * shape, scale), 0.0)
    return x.astype(np.float32), region.astype(np.int64), y.astype(np.float32)


class TabularTweedie(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(N_REGION, EMB_DIM)
        self.mlp = nn.Sequential(
            nn.Linear(EMB_DIM + N_NUM, 32), nn.LayerNorm(32), nn.ReLU(), nn.Dropout(0.2),
            nn.Linear(32, 16), nn.LayerNorm(16), nn.ReLU(), nn.Dropout(0.1),
        )
        self.head = nn.Linear(16, 1)

    def forward(self, region, x_num):
        h = torch.cat([self.emb(region), x_num], dim=1)
        return self.head(self.mlp(h)).squeeze(-1)


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = TabularTweedie()
    m.train()
    return m


def inputs(step=0):
    x, region, y = sample_policies(step)
    _DATA["y"] = torch.from_numpy(y)
    return (), {"region": torch.from_numpy(region), "x_num": torch.from_numpy(x)}


def loss(output):
    eta = output
    y = _DATA["y"].to(eta.dtype)
    y_term = torch.where(y > 0, y.clamp_min(1e-12) ** (2 - P), torch.zeros_like(y)) / ((1 - P) * (2 - P))
    dev = 2 * (y_term - y * torch.exp((1 - P) * eta) / (1 - P) + torch.exp((2 - P) * eta) / (2 - P))
    return dev.mean()


def optimizer(model):
    opt = torch.optim.Adam(model.parameters(), lr=0.01, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-4)
    if bug(BUGS) == "torch_gamma_default":
        sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 2])
    else:
        sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 2], gamma=0.5)
    return opt, sched
