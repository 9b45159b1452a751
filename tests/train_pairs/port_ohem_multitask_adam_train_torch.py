"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_ohem_multitask_adam_train_paddle.py).

    Net: registers shared = Sequential(Linear 10 -> 32, LayerNorm(32), ReLU, Dropout(0.1),
        Linear 32 -> 32, ReLU, Dropout(0.2)) (.0-.6), then head: ONE fused Linear 32 -> 9 whose
        outputs 0:5 are the class logits and 5:9 the box deltas (both heads in one matmul)
    forward(x) -> (logits [16, 5], deltas [16, 4]) = head(shared(x)).split([5, 4], dim=1)

Loss (OHEM): ce = F.cross_entropy(logits, y, reduction="none"); the per-sample losses sorted in
descending order and the first 8 indices kept (torch.sort, not topk); cls = ce[keep].mean();
reg = F.huber_loss(deltas[keep], targets[keep], delta=0.5) (paddle's smooth_l1_loss with delta is
the Huber loss); loss = cls + 2.0 * reg.
Optimizer: Adam(lr 2e-3, betas (0.9, 0.999), eps 1e-8); clip_grad_norm_(model.parameters(), 1.0)
in clip_grad().
Data: the same samples as the paddle side (default_rng(3350 + step), same recipe).

PADIFF_BUG (this side only):
  torch_clip_per_module -> clip_grad() clips the shared trunk and the fused head separately
                          (clip_grad_norm_(model.shared.parameters(), 1.0), then the same for
                          model.head): two norms of 1.0 instead of one global norm of 1.0
  torch_smooth_l1_beta -> reg = F.smooth_l1_loss(..., beta=0.5): paddle's smooth_l1_loss(delta=0.5)
                          ported name for name, but torch's smooth_l1 with beta is the Huber loss
                          divided by beta (twice as large here)
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_clip_per_module", "torch_smooth_l1_beta"} | {"paddle_second_dropout"}  # the paddle side's, ignored here
BATCH, N_FEATS, WIDTH, NUM_CLASSES, BOX_DIM = 16, 10, 32, 5, 4
DROPOUT = (0.1, 0.2)
NUM_HARD, BOX_WEIGHT, DELTA = 8, 2.0, 0.5
LR, MAX_NORM = 2e-3, 1.0

_MB = {}


def batch(step):
    rng = np.random.default_rng(3350 + step)
    x = rng.standard_normal((BATCH, N_FEATS)).astype(np.float32)
    y = rng.integers(0, NUM_CLASSES, BATCH).astype(np.int64)
    t = (0.5 * rng.standard_normal((BATCH, BOX_DIM))).astype(np.float32)
    return x, y, t


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        p1, p2 = DROPOUT
        self.shared = nn.Sequential(
            nn.Linear(N_FEATS, WIDTH), nn.LayerNorm(WIDTH), nn.ReLU(), nn.Dropout(p1),
            nn.Linear(WIDTH, WIDTH), nn.ReLU(), nn.Dropout(p2),
        )
        self.head = nn.Linear(WIDTH, NUM_CLASSES + BOX_DIM)

    def forward(self, x):
        logits, deltas = self.head(self.shared(x)).split([NUM_CLASSES, BOX_DIM], dim=1)
        return logits, deltas


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = Net()
    m.train()
    return m


def inputs(step=0):
    x, y, t = batch(step)
    _MB.update(y=torch.from_numpy(y), t=torch.from_numpy(t))
    return (torch.from_numpy(x),), {}


def loss(output):
    logits, deltas = output
    ce = F.cross_entropy(logits, _MB["y"], reduction="none")
    _, order = ce.sort(descending=True)
    keep = order[:NUM_HARD]
    cls_loss = ce[keep].mean()
    target = _MB["t"].to(deltas.dtype)[keep]
    if bug(BUGS) == "torch_smooth_l1_beta":
        reg_loss = F.smooth_l1_loss(deltas[keep], target, beta=DELTA)
    else:
        reg_loss = F.huber_loss(deltas[keep], target, delta=DELTA)
    return cls_loss + BOX_WEIGHT * reg_loss


def optimizer(model):
    return torch.optim.Adam(model.parameters(), lr=LR, betas=(0.9, 0.999), eps=1e-8)


def clip_grad(model):
    if bug(BUGS) == "torch_clip_per_module":
        torch.nn.utils.clip_grad_norm_(model.shared.parameters(), MAX_NORM)
        torch.nn.utils.clip_grad_norm_(model.head.parameters(), MAX_NORM)
    else:
        torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
