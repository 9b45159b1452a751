"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_wing_lambdalr_train_paddle.py): a CNN landmark regressor with the Wing loss, 3 steps.

    LandmarkRegressor: registers features = Sequential(Conv2d 3 -> 8 (no bias), BatchNorm2d,
        ReLU, MaxPool2d(2), Conv2d 8 -> 16 (no bias), BatchNorm2d, ReLU, MaxPool2d(2)) (.0-.7),
        regressor = Sequential(Dropout 0.2, Linear 64 -> 32, ReLU, Dropout 0.1, Linear 32 -> 10)
        (.0-.4); the 2x2 average pooling is F.adaptive_avg_pool2d in forward (no module)
    forward(x [8, 3, 16, 16]) -> [8, 10] landmark coordinates (x, y pairs, 32-pixel frame)

Loss: WingLoss written from the paper, on [B, K, 2]: delta = pred - target, |delta| < w ->
w log(1 + |delta| / eps), else |delta| - C with C = w - w log(1 + w / eps); summed over the
coordinates, averaged over faces and coordinates (the mean over all elements). w 10, eps 2.
Optimizer: AdamW(lr 0.01, betas (0.9, 0.999), eps 1e-8) with two parameter groups (conv / linear
weights weight_decay 0.05, BatchNorm scales and biases 0.0) and LambdaLR(lr_lambda):
(step + 1) / 2 for the 2 warm-up steps, then 0.9 ** step: lr 0.005, 0.01, 0.0081 for updates 1..3;
optimizer() returns (optimizer, scheduler).
Data: the same faces as the paddle side (default_rng(4080 + step), drawn by the same recipe).

PADIFF_BUG (this side only):
  torch_wing_signed -> the branch test on the signed error, delta < w, instead of |delta| < w:
              errors below -w take the log piece (w log(1 + |delta| / eps)) instead of |delta| - C
  torch_drop_swap   -> the regressor's dropout rates swapped: Dropout(0.1) before the first
              Linear and Dropout(0.2) before the second (the reference has 0.2, then 0.1)
"""
import math

import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_wing_signed", "torch_drop_swap"} | {"paddle_warmup_zero"}  # the paddle side's, ignored here
K, B, SIZE, ORIG = 5, 8, 16, 32
W, EPS = 10.0, 2.0
BASE_LR, WEIGHT_DECAY, WARMUP_STEPS, GAMMA = 0.01, 0.05, 2, 0.9

_TARGETS = {}


def make_batch(step):
    rng = np.random.default_rng(4080 + step)
    landmarks = rng.uniform(2.0, ORIG - 2.0, (B, K, 2))
    grid_y, grid_x = np.mgrid[0:SIZE, 0:SIZE].astype(np.float64)
    images = 0.3 * rng.standard_normal((B, 3, SIZE, SIZE))
    for i in range(B):
        for k in range(K):
            px, py = landmarks[i, k] * SIZE / ORIG
            images[i, k % 3] += np.exp(-((grid_x - px) ** 2 + (grid_y - py) ** 2) / (2 * 1.2 ** 2))
    return images.astype(np.float32), landmarks.reshape(B, 2 * K).astype(np.float32)


class WingLoss(nn.Module):
    def __init__(self, w=W, eps=EPS, signed=False):
        super().__init__()
        self.w, self.eps, self.signed = w, eps, signed
        self.C = w - w * math.log(1 + w / eps)

    def forward(self, pred, target):
        delta = pred.view(-1, K, 2) - target.view(-1, K, 2)
        abs_delta = delta.abs()
        small = (delta if self.signed else abs_delta) < self.w
        loss = torch.where(small, self.w * torch.log(1 + abs_delta / self.eps), abs_delta - self.C)
        return loss.sum(dim=(1, 2)).mean() / (2 * K)


class LandmarkRegressor(nn.Module):
    def __init__(self, p_in=0.2, p_hidden=0.1):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True), nn.MaxPool2d(2),
        )
        self.regressor = nn.Sequential(
            nn.Dropout(p_in), nn.Linear(64, 32), nn.ReLU(inplace=True), nn.Dropout(p_hidden), nn.Linear(32, 2 * K),
        )

    def forward(self, x):
        x = F.adaptive_avg_pool2d(self.features(x), 2)
        return self.regressor(torch.flatten(x, 1))


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    m = LandmarkRegressor(*((0.1, 0.2) if b == "torch_drop_swap" else (0.2, 0.1)))
    m.train()
    return m


def inputs(step=0):
    images, landmarks = make_batch(step)
    _TARGETS["lmk"] = torch.from_numpy(landmarks)
    return (torch.from_numpy(images),), {}


def loss(output):
    criterion = WingLoss(signed=bug(BUGS) == "torch_wing_signed")
    return criterion(output, _TARGETS["lmk"].to(output.dtype))


def lr_lambda(step):
    if step < WARMUP_STEPS:
        return (step + 1) / WARMUP_STEPS
    return GAMMA ** step


def optimizer(model):
    decay = [p for p in model.parameters() if p.ndim > 1]
    no_decay = [p for p in model.parameters() if p.ndim <= 1]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": WEIGHT_DECAY}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=BASE_LR, betas=(0.9, 0.999), eps=1e-8)
    return opt, torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda)
