"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_simclr_train_paddle.py), laid out like the common PyTorch SimCLR code
(Spijkervet/SimCLR's NT_Xent, a Sequential backbone and head).

    SimCLRNet: registers backbone = Sequential(Conv2d 3 -> 8 no bias, BatchNorm2d, ReLU,
        Conv2d 8 -> 16 stride 2 no bias, BatchNorm2d, ReLU, AdaptiveAvgPool2d(1), Flatten())
        (.0-.7), then head = Sequential(Linear 16 -> 32 no bias, BatchNorm1d, ReLU, Dropout(0.1),
        Linear 32 -> 8) (.0-.4)
    forward(x_i, x_j): the two views concatenated along the batch (one BatchNorm batch of 16, as
        the paddle side), h = backbone(x), z = head(h); returns (z [2B, 8], h [2B, 16])

Views: the same numpy draws as the paddle side (default_rng(5500 + step): crop offsets, flips,
per-channel contrast / offset, noise), applied with torch ops (slicing, torch.flip, x * c + o,
+ noise); inputs(step) returns the two views separately.
Loss (NT_Xent, temperature 0.2): sim = cosine_similarity(z[:, None], z[None], dim=2) / T; the
positives diag(sim, B) and diag(sim, -B); the negatives sim[mask] with a mask that removes the
diagonal and the positive pairs; logits = cat(positives, negatives), labels 0;
CrossEntropyLoss(reduction="sum") / 2B.
Optimizer: SGD(lr 0.05, momentum 0.9, nesterov=True, dampening 0) with two parameter groups:
weights of ndim >= 2 with weight_decay 5e-4 (torch's weight_decay is L2 added to the gradient),
BatchNorm and bias parameters with weight_decay 0.

PADIFF_BUG (this side only):
  ntxent_self_negative -> the NT_Xent mask removes the positive pairs but not the diagonal
              (fill_diagonal_ forgotten): each row's self-similarity 1/T = 5 is a "negative"
  head_dropout_default -> head's Dropout built as nn.Dropout() (torch's default p 0.5, not 0.1)
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"ntxent_self_negative", "head_dropout_default"} | {"paddle_decay_bn_bias"}  # the paddle side's, ignored here
N_IMG, IMG, CROP = 8, 12, 10
TEMPERATURE, LR, MOMENTUM, WEIGHT_DECAY = 0.2, 0.05, 0.9, 5e-4

_AUG = {}


def draw(step):
    rng = np.random.default_rng(5500 + step)
    images = rng.standard_normal((N_IMG, 3, IMG, IMG)).astype(np.float32)
    offsets = rng.integers(0, IMG - CROP + 1, (2, N_IMG, 2))
    flips = rng.random((2, N_IMG)) < 0.5
    contrast = rng.uniform(0.6, 1.4, (2, N_IMG, 3, 1, 1)).astype(np.float32)
    shift = rng.uniform(-0.3, 0.3, (2, N_IMG, 3, 1, 1)).astype(np.float32)
    noise = (0.05 * rng.standard_normal((2, N_IMG, 3, CROP, CROP))).astype(np.float32)
    return images, offsets, flips, contrast, shift, noise


class SimCLRNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
            nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        p = 0.5 if bug(BUGS) == "head_dropout_default" else 0.1
        self.head = nn.Sequential(
            nn.Linear(16, 32, bias=False), nn.BatchNorm1d(32), nn.ReLU(inplace=True),
            nn.Dropout() if p == 0.5 else nn.Dropout(p), nn.Linear(32, 8),
        )

    def forward(self, x_i, x_j):
        h = self.backbone(torch.cat([x_i, x_j], dim=0))
        return self.head(h), h


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = SimCLRNet()
    m.train()
    return m


def inputs(step=0):
    images, offsets, flips, contrast, shift, noise = draw(step)
    x = torch.from_numpy(images)
    views = []
    for v in range(2):
        batch = []
        for i in range(N_IMG):
            top, left = int(offsets[v, i, 0]), int(offsets[v, i, 1])
            crop = x[i, :, top:top + CROP, left:left + CROP]
            batch.append(torch.flip(crop, dims=[2]) if flips[v, i] else crop)
        view = torch.stack(batch) * torch.from_numpy(contrast[v]) + torch.from_numpy(shift[v])
        views.append(view + torch.from_numpy(noise[v]))
    return (views[0], views[1]), {}


def nt_xent_mask(batch_size, keep_diagonal=False):
    n = 2 * batch_size
    mask = torch.ones((n, n), dtype=torch.bool)
    if not keep_diagonal:
        mask = mask.fill_diagonal_(0)
    for i in range(batch_size):
        mask[i, batch_size + i] = 0
        mask[batch_size + i, i] = 0
    return mask


def loss(output):
    z, _ = output
    n = z.shape[0]
    b = n // 2
    sim = F.cosine_similarity(z.unsqueeze(1), z.unsqueeze(0), dim=2) / TEMPERATURE
    sim_i_j = torch.diag(sim, b)
    sim_j_i = torch.diag(sim, -b)
    positive = torch.cat((sim_i_j, sim_j_i), dim=0).reshape(n, 1)
    mask = nt_xent_mask(b, keep_diagonal=bug(BUGS) == "ntxent_self_negative")
    negative = sim[mask].reshape(n, -1)
    logits = torch.cat((positive, negative), dim=1)
    labels = torch.zeros(n, dtype=torch.long)
    return nn.CrossEntropyLoss(reduction="sum")(logits, labels) / n


def optimizer(model):
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.ndim >= 2], "weight_decay": WEIGHT_DECAY},
              {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0}]
    return torch.optim.SGD(groups, lr=LR, momentum=MOMENTUM, nesterov=True)
