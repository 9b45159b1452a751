"""The same conv net, torch side, written the way torchvision writes one: one Sequential
``features`` (Conv, BatchNorm, ReLU, then blocks of their own Sequentials), so no module
name says what the paddle side's names say. PADIFF_BUG=bn_eps: block 1's second BatchNorm
eps 0.5; PADIFF_BUG=bn_momentum: its momentum 0.2; PADIFF_BUG=lr: SGD at 0.2 instead of 0.1. PADIFF_TRAIN=1: train mode with SGD."""
import os

import torch
from _common import bug, image
from torch import nn


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(),
            nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c),
        )
        self.out = nn.ReLU()

    def forward(self, x):
        return self.out(self.body(x) + x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(), Block(8), Block(8),
            nn.AdaptiveAvgPool2d(1),
        )
        self.classifier = nn.Linear(8, 4)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


def train() -> bool:
    return os.environ.get("PADIFF_TRAIN", "") == "1"


def model():
    torch.manual_seed(0)
    m = Net()
    m.train(train())
    if bug() == "bn_eps":
        m.features[4].body[4].eps = 0.5
    elif bug() == "bn_momentum":  # 0.2 where paddle's 0.9 means 0.1: running stats drift in train mode
        m.features[4].body[4].momentum = 0.2
    return m


def inputs():
    return torch.from_numpy(image())


def loss(out):
    return (out**2).mean()


def optimizer(m):
    return torch.optim.SGD(m.parameters(), lr=0.2 if bug() == "lr" else 0.1) if train() else None
