"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_multimargin_sgd_warmcos_train_paddle.py).

    MarginNet: registers out (Linear 32 -> 5) first, then fc1 (Linear 20 -> 64), ln1 (LayerNorm),
        fc2 (Linear 64 -> 32), ln2 (LayerNorm), act (one ReLU module, called twice), drop1
        (Dropout 0.3), drop2 (Dropout 0.1); forward: drop1(act(ln1(fc1(x)))),
        drop2(act(ln2(fc2(.)))), out
Same per-step numpy batch as the paddle side (default_rng(4300 + step)).

Loss: the built-in nn.MultiMarginLoss(p=1, margin=0.5, weight=w), w = [1.0, 2.0, 0.5, 1.5, 1.0]
(torch: sum_{i != y} w[y] max(0, margin - x[y] + x[i]) / C per sample, plain mean over the batch).
Optimizer: SGD(lr 0.1, momentum 0.9, nesterov=True, weight_decay 1e-3) and the schedule written by
hand as a LambdaLR factor: step 0 -> 0.1 (warm-up from 0.01), then the cosine
0.5 (1 + cos(pi (s - 1) / 3)): lr 0.01, 0.1, 0.075 for updates 1..3.

PADIFF_BUG (this side only):
  torch_dropout_swap -> the two dropout rates swapped (drop1 0.1, drop2 0.3: the config list read
              in reverse)
"""
import math

import numpy as np
import torch
from _train_common import bug
from torch import nn

BUGS = {"torch_dropout_swap"} | {"paddle_weighted_mean", "paddle_warmup_len"}  # the paddle side's, ignored here
BATCH, N_FEATURES, NUM_CLASSES = 16, 20, 5
DROPOUT = (0.3, 0.1)
MARGIN = 0.5
CLASS_WEIGHT = [1.0, 2.0, 0.5, 1.5, 1.0]
BASE_LR, WARMUP_START, WARMUP_STEPS, TOTAL_STEPS = 0.1, 0.01, 1, 4

_Y = {}


def sample(step):
    rng = np.random.default_rng(4300 + step)
    x = rng.standard_normal((BATCH, N_FEATURES)).astype(np.float32)
    teacher = np.random.default_rng(4399).standard_normal((N_FEATURES, NUM_CLASSES))
    y = np.argmax(x @ teacher + 0.5 * rng.standard_normal((BATCH, NUM_CLASSES)), axis=1).astype(np.int64)
    return x, y


class MarginNet(nn.Module):
    def __init__(self, dropout=DROPOUT):
        super().__init__()
        self.out = nn.Linear(32, NUM_CLASSES)
        self.fc1 = nn.Linear(N_FEATURES, 64)
        self.ln1 = nn.LayerNorm(64)
        self.fc2 = nn.Linear(64, 32)
        self.ln2 = nn.LayerNorm(32)
        self.act = nn.ReLU()
        self.drop1 = nn.Dropout(dropout[0])
        self.drop2 = nn.Dropout(dropout[1])

    def forward(self, x):
        x = self.drop1(self.act(self.ln1(self.fc1(x))))
        x = self.drop2(self.act(self.ln2(self.fc2(x))))
        return self.out(x)


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = MarginNet(dropout=DROPOUT[::-1] if bug(BUGS) == "torch_dropout_swap" else DROPOUT)
    m.train()
    return m


def inputs(step=0):
    x, y = sample(step)
    _Y["y"] = torch.from_numpy(y)
    return (torch.from_numpy(x),), {}


def loss(output):
    criterion = nn.MultiMarginLoss(p=1, margin=MARGIN, weight=torch.tensor(CLASS_WEIGHT, dtype=output.dtype))
    return criterion(output, _Y["y"])


def lr_lambda(step):
    if step < WARMUP_STEPS:
        return (WARMUP_START + (BASE_LR - WARMUP_START) * step / WARMUP_STEPS) / BASE_LR
    progress = (step - WARMUP_STEPS) / (TOTAL_STEPS - WARMUP_STEPS)
    return 0.5 * (1.0 + math.cos(math.pi * progress))


def optimizer(model):
    opt = torch.optim.SGD(model.parameters(), lr=BASE_LR, momentum=0.9, nesterov=True, weight_decay=1e-3)
    return opt, torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda)
