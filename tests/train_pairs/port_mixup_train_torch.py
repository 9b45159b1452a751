"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_mixup_train_paddle.py) the facebookresearch/mixup-cifar10 way.

    Net: registers features = Sequential(Conv2d(3, 8, 3, padding=1, bias=False), BatchNorm2d(8),
        ReLU(inplace=True), Conv2d(8, 16, 3, stride=2, padding=1, bias=False), BatchNorm2d(16),
        ReLU(inplace=True)) (.0 .. .5), then fc (Linear 16 -> 10); global pooling is
        functional: x.mean((2, 3))
Mixup as mixup_data(): x[index] with the given lambda and permutation (the same per-step numbers
as the paddle side); loss as mixup_criterion(): lam * CE(pred, y_a) + (1 - lam) * CE(pred, y_b),
both with label_smoothing=0.1 (equal to the CE against the smoothed mixed targets: CE is linear
in the target).
Optimizer: SGD(lr 0.1, momentum 0.9, nesterov=True, weight_decay 5e-4) +
CosineAnnealingLR(T_max=3) stepped after every update (lr 0.1, 0.075, 0.025).

PADIFF_BUG (this side only):
  targets_unmixed -> the images are mixed but the loss uses only the first targets:
              CE(pred, y_a, label_smoothing=0.1) (mixup_criterion not used)
  no_nesterov     -> SGD(..., momentum=0.9, weight_decay=5e-4) without nesterov=True (torch's
              default is plain heavy-ball momentum)
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"targets_unmixed", "no_nesterov"} | {"paddle_sched_ahead"}  # the paddle side's, ignored here
NUM_CLASSES, BATCH, IMG, STEPS = 10, 8, 8, 3
LR, MOMENTUM, WD, LABEL_SMOOTHING = 0.1, 0.9, 5e-4, 0.1

_TARGETS = {}


def draw(step):
    rng = np.random.default_rng(4950 + step)
    x = rng.standard_normal((BATCH, 3, IMG, IMG)).astype(np.float32)
    y = rng.integers(0, NUM_CLASSES, BATCH).astype(np.int64)
    lam = float(rng.beta(1.0, 1.0))
    index = rng.permutation(BATCH).astype(np.int64)
    return x, y, lam, index


def mixup_data(x, y, lam, index):
    mixed_x = lam * x + (1 - lam) * x[index, :]
    return mixed_x, y, y[index], lam


class Net(nn.Module):
    def __init__(self, num_classes=NUM_CLASSES):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, kernel_size=3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
            nn.Conv2d(8, 16, kernel_size=3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16),
            nn.ReLU(inplace=True),
        )
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        return self.fc(self.features(x).mean((2, 3)))


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = Net()
    m.train()
    return m


def inputs(step=0):
    x, y, lam, index = draw(step)
    mixed_x, y_a, y_b, lam = mixup_data(torch.from_numpy(x), torch.from_numpy(y), lam, torch.from_numpy(index))
    _TARGETS.update(y_a=y_a, y_b=y_b, lam=lam)
    return (mixed_x,), {}


def mixup_criterion(criterion, pred, y_a, y_b, lam):
    return lam * criterion(pred, y_a) + (1 - lam) * criterion(pred, y_b)


def loss(output):
    def criterion(pred, y):
        return F.cross_entropy(pred, y, label_smoothing=LABEL_SMOOTHING)

    if bug(BUGS) == "targets_unmixed":
        return criterion(output, _TARGETS["y_a"])
    return mixup_criterion(criterion, output, _TARGETS["y_a"], _TARGETS["y_b"], _TARGETS["lam"])


def optimizer(model):
    nesterov = bug(BUGS) != "no_nesterov"
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM, weight_decay=WD, nesterov=nesterov)
    return opt, torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=STEPS)
