"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_barlow_train_paddle.py) the facebookresearch/barlowtwins (main.py) way.

    BarlowTwins: registers backbone, projector, bn; forward(y1, y2):
        z1, z2 = projector(backbone(torch.cat([y1, y2]))).chunk(2)   (one batch of 2B, as the paddle
            side: each BatchNorm sees the step's 2B images once)
        c = bn(z1).T @ bn(z2) / B, bn = nn.BatchNorm1d(32, affine=False) (a module, called twice;
            in training it normalises with the batch statistics, biased variance, eps 1e-5)
        returns c [D, D]
    backbone: Sequential(Conv2d(3, 8, 3, padding=1, bias=False), BatchNorm2d(8), ReLU(inplace),
        Conv2d(8, 16, 3, stride=2, padding=1, bias=False), BatchNorm2d(16), ReLU(inplace),
        AdaptiveAvgPool2d(1), Flatten()) (.0 - .7)
    projector: built from sizes [16, 32, 32, 32] as main.py: (Linear(bias=False), BatchNorm1d,
        ReLU(inplace)) twice, then Linear(32, 32, bias=False) (.0 - .6)
Inputs: the same per-step draws as the paddle side (default_rng(7000 + step)), flip / contrast /
shift / noise applied with torch ops.
Loss: main.py's: on_diag = diagonal(c).add(-1).pow(2).sum(), off_diag = off_diagonal(c).pow(2).sum()
(the flatten / view(n - 1, n + 1) trick), loss = on_diag + lambd * off_diag, lambd 0.0051.
Optimizer: AdamW over main.py's two groups (param_weights: ndim != 1, weight_decay 1e-2;
param_biases: ndim == 1, weight_decay 0), lr 2e-3, betas (0.9, 0.999), eps 1e-8, and a LambdaLR
with main.py's adjust_learning_rate cosine (no warm-up here): q = 0.5 (1 + cos(pi step / 10)),
factor q + 1e-3 (1 - q), stepped after every update.

PADIFF_BUG (this side only):
  torch_cos_half -> the cosine factor written as cos(pi step / max_steps) without the
              0.5 * (1 + ...) (a schedule that starts right and falls twice as fast)
"""
import math

import numpy as np
import torch
from _train_common import bug
from torch import nn

BUGS = {"torch_cos_half"} | {"paddle_lambd_old", "paddle_bn_mom"}  # the paddle side's, ignored here
BATCH, IMG = 16, 8
SIZES = [16, 32, 32, 32]
LAMBD, LR, WD, MAX_STEPS = 0.0051, 2e-3, 1e-2, 10


def draw(step):
    rng = np.random.default_rng(7000 + step)
    base = rng.standard_normal((BATCH, 3, IMG, IMG)).astype(np.float32)
    aug = []
    for _ in range(2):
        flip = rng.random(BATCH) < 0.5
        contrast = rng.uniform(0.7, 1.3, BATCH).astype(np.float32)
        shift = rng.uniform(-0.2, 0.2, BATCH).astype(np.float32)
        noise = (0.05 * rng.standard_normal((BATCH, 3, IMG, IMG))).astype(np.float32)
        aug.append((flip, contrast, shift, noise))
    return base, aug


def transform(x, flip, contrast, shift, noise):
    x = x.clone()
    idx = torch.from_numpy(np.flatnonzero(flip))
    x[idx] = x[idx].flip(-1)
    return x * torch.from_numpy(contrast).view(-1, 1, 1, 1) + torch.from_numpy(shift).view(-1, 1, 1, 1) \
        + torch.from_numpy(noise)


def off_diagonal(x):
    # return a flattened view of the off-diagonal elements of a square matrix
    n, m = x.shape
    assert n == m
    return x.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten()


class BarlowTwins(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
            nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        layers = []
        for i in range(len(SIZES) - 2):
            layers.append(nn.Linear(SIZES[i], SIZES[i + 1], bias=False))
            layers.append(nn.BatchNorm1d(SIZES[i + 1]))
            layers.append(nn.ReLU(inplace=True))
        layers.append(nn.Linear(SIZES[-2], SIZES[-1], bias=False))
        self.projector = nn.Sequential(*layers)
        self.bn = nn.BatchNorm1d(SIZES[-1], affine=False)  # normalization layer for the representations z1 and z2

    def forward(self, y1, y2):
        z1, z2 = self.projector(self.backbone(torch.cat([y1, y2]))).chunk(2)
        c = self.bn(z1).T @ self.bn(z2)
        c.div_(y1.shape[0])
        return c


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = BarlowTwins()
    m.train()
    return m


def inputs(step=0):
    base, aug = draw(step)
    x = torch.from_numpy(base)
    return (transform(x, *aug[0]), transform(x, *aug[1])), {}


def loss(c):
    on_diag = torch.diagonal(c).add(-1).pow(2).sum()
    off_diag = off_diagonal(c).pow(2).sum()
    return on_diag + LAMBD * off_diag


def optimizer(model):
    param_weights = [p for p in model.parameters() if p.ndim != 1]
    param_biases = [p for p in model.parameters() if p.ndim == 1]
    opt = torch.optim.AdamW([{"params": param_weights, "weight_decay": WD}, {"params": param_biases, "weight_decay": 0.0}],
                            lr=LR, betas=(0.9, 0.999), eps=1e-8)

    def factor(step):
        if bug(BUGS) == "torch_cos_half":
            q = math.cos(math.pi * step / MAX_STEPS)
        else:
            q = 0.5 * (1 + math.cos(math.pi * step / MAX_STEPS))
        return q + 1e-3 * (1 - q)

    return opt, torch.optim.lr_scheduler.LambdaLR(opt, factor)
