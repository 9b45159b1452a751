"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_byol_train_paddle.py) the lucidrains/byol-pytorch way: an online encoder wrapping
the backbone and a projector, an online predictor, and a target encoder made by deepcopy.

    online_encoder: net = Sequential(Linear(32, 64), ReLU, Linear(64, 64), ReLU) (.0 .. .3),
                    projector = MLP(64, 16, 64) = Sequential(Linear, BatchNorm1d(64), ReLU, Linear)
    online_predictor = MLP(16, 16, 64)
    target_encoder = copy.deepcopy(online_encoder).requires_grad_(False), run under torch.no_grad()
Registration order: online_encoder, online_predictor, target_encoder (byol-pytorch's).
forward(view_one, view_two): images = torch.cat((view_one, view_two)) (byol-pytorch's single
pass: BatchNorm statistics over both views), the online encoder and predictor on it, the target
on it (train mode: batch statistics, own running stats), each result chunk(2)-ed back per view. Returns (online_pred_one, online_pred_two, target_proj_one, target_proj_two).
No dropout.

Loss: loss_fn(x, y) = 2 - 2 * F.cosine_similarity(x, y, dim=-1), symmetrised:
(loss_fn(p1, t2) + loss_fn(p2, t1)).mean().

Optimizer: torch.optim.SGD(lr 0.05, momentum 0.9, weight_decay 1e-4) over the parameters that
require grad; the EMA of the target is a step post-hook of the optimizer
(Optimizer.register_step_post_hook): target.mul_(tau).add_(online, alpha=1 - tau), tau 0.99,
parameters only.

PADIFF_BUG (this side only):
  bn_momentum -> MLP builds nn.BatchNorm1d(hidden, momentum=0.9): the paddle value copied
              literally (paddle 0.9 means running = 0.9 running + 0.1 batch; torch's momentum is
              the weight of the NEW batch, so 0.9 keeps only 10 % of the old running stats)
"""
import copy

import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"bn_momentum"} | {"paddle_ema_inverted", "paddle_cos_axis"}  # the paddle side's, ignored here
IN_DIM, HIDDEN, REP, PROJ_HIDDEN, PROJ = 32, 64, 64, 64, 16
BATCH = 8
LR, MOMENTUM, WD, TAU = 0.05, 0.9, 1e-4, 0.99


def MLP(dim, projection_size, hidden_size):
    momentum = 0.9 if bug(BUGS) == "bn_momentum" else 0.1
    return nn.Sequential(
        nn.Linear(dim, hidden_size),
        nn.BatchNorm1d(hidden_size, momentum=momentum),
        nn.ReLU(inplace=True),
        nn.Linear(hidden_size, projection_size),
    )


class NetWrapper(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(IN_DIM, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, REP), nn.ReLU())
        self.projector = MLP(REP, PROJ, PROJ_HIDDEN)

    def forward(self, x):
        return self.projector(self.net(x))


class BYOL(nn.Module):
    def __init__(self, moving_average_decay=TAU):
        super().__init__()
        self.online_encoder = NetWrapper()
        self.online_predictor = MLP(PROJ, PROJ, PROJ_HIDDEN)
        self.target_encoder = copy.deepcopy(self.online_encoder)
        self.target_encoder.requires_grad_(False)
        self.beta = moving_average_decay

    @torch.no_grad()
    def update_moving_average(self):
        for online, target in zip(self.online_encoder.parameters(), self.target_encoder.parameters()):
            target.mul_(self.beta).add_(online, alpha=1 - self.beta)

    def forward(self, view_one, view_two):
        images = torch.cat((view_one, view_two), dim=0)
        online_predictions = self.online_predictor(self.online_encoder(images))
        online_pred_one, online_pred_two = online_predictions.chunk(2, dim=0)
        with torch.no_grad():
            target_projections = self.target_encoder(images)
            target_proj_one, target_proj_two = target_projections.chunk(2, dim=0)
        return online_pred_one, online_pred_two, target_proj_one.detach(), target_proj_two.detach()


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = BYOL()
    m.train()
    return m


def _views(step):
    rng = np.random.default_rng(4600 + step)
    x = rng.standard_normal((BATCH, IN_DIM))
    v1 = x * (1.0 + 0.2 * rng.standard_normal(x.shape)) + 0.2 * rng.standard_normal(x.shape)
    v2 = x * (1.0 + 0.2 * rng.standard_normal(x.shape)) + 0.2 * rng.standard_normal(x.shape)
    return v1.astype("float32"), v2.astype("float32")


def inputs(step=0):
    v1, v2 = _views(step)
    return (torch.from_numpy(v1), torch.from_numpy(v2)), {}


def loss_fn(x, y):
    return 2 - 2 * F.cosine_similarity(x, y, dim=-1)


def loss(output):
    p1, p2, t1, t2 = output
    return (loss_fn(p1, t2) + loss_fn(p2, t1)).mean()


def optimizer(model):
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=LR, momentum=MOMENTUM,
                          weight_decay=WD)
    opt.register_step_post_hook(lambda _opt, _args, _kwargs: model.update_moving_average())
    return opt
