"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_asl_nesterov_train_paddle.py), timm style.

    TaggerNet: registers norm (the final LayerNorm(32)), proj_in (Linear 24 -> 32), trunk
        (ModuleList of 2 Residual(fn = Sequential(Linear 32 -> 32, LayerNorm, GELU, Dropout)):
        .fn.0 .. .fn.3), classifier (Linear 32 -> 6); calls proj_in, trunk.0, trunk.1, norm,
        classifier
    forward(x) -> logits [B, 6]

Loss (ASL written from the paper's formulas, per label): p = sigmoid(x); shifted probability of
the negatives p_m = clamp(p - 0.05, min=0);
L+ = (1 - p) ** 1 * log(clamp(p, min=1e-8)), L- = p_m ** 4 * log(clamp(1 - p_m, min=1e-8));
loss = -(y L+ + (1 - y) L-).sum().
Optimizer: SGD(lr 0.1, momentum 0.9, nesterov=True), timm's param_groups_weight_decay: weight
decay 1e-3 on tensors of ndim >= 2, 0 on 1-D tensors (biases, LayerNorm); LinearLR(start_factor
0.25, end_factor 1.0, total_iters 4), stepped after each update: lr 0.025, 0.04375, 0.0625.
Data: the same batches as the paddle side (default_rng(3150 + step), same recipe).

PADIFF_BUG (this side only):
  block_drop_default -> the trunk built as [block(DIM, drop=0.2)] + [block(DIM) for the rest]:
              the second block gets block()'s default drop=0.0 (no dropout in trunk.1)
"""
import numpy as np
import torch
from _train_common import bug
from torch import nn

BUGS = {"block_drop_default"} | {"paddle_focus_unshifted", "paddle_decay_by_pname"}  # paddle side's, ignored
IN_FEATURES, WIDTH, NUM_CLASSES, DEPTH, BATCH, DROP_RATE = 24, 32, 6, 2, 16, 0.2
GAMMA_POS, GAMMA_NEG, PROB_MARGIN, EPS = 1, 4, 0.05, 1e-8
LR, MOMENTUM, WEIGHT_DECAY = 0.1, 0.9, 1e-3

_TARGETS = {}


def make_batch(step):
    rng = np.random.default_rng(3150 + step)
    targets = (rng.random((BATCH, NUM_CLASSES)) < 0.3).astype(np.float32)
    feats = rng.standard_normal((BATCH, IN_FEATURES))
    feats[:, :NUM_CLASSES] += 1.5 * (targets - 0.3)
    return feats.astype(np.float32), targets


class Residual(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return x + self.fn(x)


def block(width, drop=0.0):
    return Residual(nn.Sequential(nn.Linear(width, width), nn.LayerNorm(width), nn.GELU(), nn.Dropout(drop)))


class TaggerNet(nn.Module):
    def __init__(self, first_only=False):
        super().__init__()
        self.norm = nn.LayerNorm(WIDTH)
        self.proj_in = nn.Linear(IN_FEATURES, WIDTH)
        if first_only:
            blocks = [block(WIDTH, drop=DROP_RATE)] + [block(WIDTH) for _ in range(DEPTH - 1)]
        else:
            blocks = [block(WIDTH, drop=DROP_RATE) for _ in range(DEPTH)]
        self.trunk = nn.ModuleList(blocks)
        self.classifier = nn.Linear(WIDTH, NUM_CLASSES)

    def forward(self, x):
        x = self.proj_in(x)
        for blk in self.trunk:
            x = blk(x)
        return self.classifier(self.norm(x))


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    m = TaggerNet(first_only=b == "block_drop_default")
    m.train()
    return m


def inputs(step=0):
    feats, targets = make_batch(step)
    _TARGETS["y"] = torch.from_numpy(targets)
    return (torch.from_numpy(feats),), {}


def loss(logits):
    y = _TARGETS["y"].to(logits.dtype)
    p = torch.sigmoid(logits)
    p_m = (p - PROB_MARGIN).clamp(min=0)
    loss_pos = (1 - p) ** GAMMA_POS * torch.log(p.clamp(min=EPS))
    loss_neg = p_m ** GAMMA_NEG * torch.log((1 - p_m).clamp(min=EPS))
    return -(y * loss_pos + (1 - y) * loss_neg).sum()


def optimizer(model):
    decay = [p for p in model.parameters() if p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    opt = torch.optim.SGD([{"params": decay, "weight_decay": WEIGHT_DECAY},
                           {"params": no_decay, "weight_decay": 0.0}],
                          lr=LR, momentum=MOMENTUM, nesterov=True)
    sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.25, end_factor=1.0, total_iters=4)
    return opt, sched
