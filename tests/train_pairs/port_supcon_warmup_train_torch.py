"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_supcon_warmup_train_paddle.py): supervised contrastive learning, 3 steps.

    SupConNet: registers backbone = Sequential(Linear 16 -> 32 (no bias), BatchNorm1d 32,
        ReLU(inplace), Linear 32 -> 32, ReLU(inplace)) (.0-.4), then head = Sequential(Linear
        32 -> 32 (no bias), BatchNorm1d 32, ReLU(inplace), Linear 32 -> 16) (.0-.3); forward: backbone,
        head, F.normalize(dim=1)
    forward(x [16, 16]) -> z [16, 16] (unit rows)

Loss (written from the paper, not from SupContrast's code): sim = z z^T / T (T 0.1); the
diagonal filled with -1e9 (an anchor is not its own candidate), log_softmax over each row;
positives = same label, diagonal excluded; loss = mean over anchors of
-(sum over positives of log_prob) / (#positives).
Optimizer: SGD(lr 0.2, momentum 0.9, nesterov=True, weight_decay=5e-4) over every parameter;
schedule SequentialLR([LinearLR(start_factor=0.1, end_factor=1.0, total_iters=2),
CosineAnnealingLR(T_max=8)], milestones=[2]): lr 0.02, 0.11, 0.2 for updates 1..3; optimizer()
returns (optimizer, scheduler).
Data: the same views as the paddle side (default_rng(3905 + step), prototypes default_rng(3900),
drawn by the same recipe).

PADIFF_BUG (this side only):
  torch_self_contrast -> the diagonal is not masked before log_softmax: each anchor's own
              similarity (1 / T = 10, the largest logit of the row) stays in the denominator
  torch_wd_skip_1d -> two parameter groups, weight decay only on tensors of >= 2 dims (the
              SimCLR / BYOL habit of not decaying biases and BatchNorm parameters); the paddle
              original decays every parameter
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_self_contrast", "torch_wd_skip_1d"} | {"paddle_head_bn_momentum"}  # the paddle side's, ignored here
N_BASE, N_CLS, D_IN, D_HID, D_PROJ = 8, 4, 16, 32, 16
TEMPERATURE = 0.1
LR, WARMUP, TOTAL = 0.2, 2, 10
MOMENTUM, WEIGHT_DECAY = 0.9, 5e-4

_STATE = {}


def make_views(step):
    protos = np.random.default_rng(3900).normal(0.0, 1.0, (N_CLS, D_IN))
    rng = np.random.default_rng(3905 + step)
    labels = rng.permutation(np.arange(N_BASE) % N_CLS)
    x = protos[labels] + rng.normal(0.0, 0.6, (N_BASE, D_IN))
    out = []
    for _view in range(2):
        s = rng.uniform(0.7, 1.3, (N_BASE, D_IN))
        m = rng.random((N_BASE, D_IN)) >= 0.15
        out.append(x * s * m + rng.normal(0.0, 0.2, (N_BASE, D_IN)))
    return np.concatenate(out, 0).astype(np.float32), labels.astype(np.int64)


class SupConNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Linear(D_IN, D_HID, bias=False), nn.BatchNorm1d(D_HID), nn.ReLU(inplace=True),
            nn.Linear(D_HID, D_HID), nn.ReLU(inplace=True),
        )
        self.head = nn.Sequential(
            nn.Linear(D_HID, D_HID, bias=False), nn.BatchNorm1d(D_HID), nn.ReLU(inplace=True), nn.Linear(D_HID, D_PROJ),
        )

    def forward(self, x):
        return F.normalize(self.head(self.backbone(x)), dim=1)


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = SupConNet()
    m.train()
    return m


def inputs(step=0):
    x, labels = make_views(step)
    _STATE["labels"] = torch.from_numpy(labels).repeat(2)
    return (torch.from_numpy(x),), {}


def loss(output):
    z = output
    labels = _STATE["labels"]
    sim = z @ z.T / TEMPERATURE
    eye = torch.eye(z.shape[0], dtype=torch.bool)
    if bug(BUGS) != "torch_self_contrast":
        sim = sim.masked_fill(eye, -1e9)
    log_prob = F.log_softmax(sim, dim=1)
    pos = (labels[:, None] == labels[None, :]) & ~eye
    pos = pos.to(z.dtype)
    per_anchor = -(log_prob * pos).sum(1) / pos.sum(1)
    return per_anchor.mean()


def optimizer(model):
    if bug(BUGS) == "torch_wd_skip_1d":
        params = [{"params": [p for p in model.parameters() if p.ndim >= 2], "weight_decay": WEIGHT_DECAY},
                  {"params": [p for p in model.parameters() if p.ndim < 2], "weight_decay": 0.0}]
    else:
        params = model.parameters()
    opt = torch.optim.SGD(params, lr=LR, momentum=MOMENTUM, nesterov=True, weight_decay=WEIGHT_DECAY)
    warmup = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, end_factor=1.0, total_iters=WARMUP)
    cosine = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=TOTAL - WARMUP)
    return opt, torch.optim.lr_scheduler.SequentialLR(opt, [warmup, cosine], milestones=[WARMUP])
