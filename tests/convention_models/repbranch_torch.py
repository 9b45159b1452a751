"""Torch side of repbranch_paddle.py: the block's branches as named attributes, ``k3_first``,
``k3_second`` (3x3 conv+BN), ``k1`` (1x1 conv+BN) and ``ident`` (the identity BatchNorm)
registered last, summed in another order; the two blocks as ``first`` and ``second`` of one
stage module.

PADIFF_BUG (this side): none."""
import torch
from _common import bug, image
from torch import nn

C = 8


class Unit(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.conv = nn.Conv2d(C, C, k, padding=k // 2, bias=False)
        self.norm = nn.BatchNorm2d(C)

    def forward(self, x):
        return self.norm(self.conv(x))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.k3_first = Unit(3)
        self.k3_second = Unit(3)
        self.k1 = Unit(1)
        self.ident = nn.BatchNorm2d(C)

    def forward(self, x):
        return torch.relu(self.k3_first(x) + self.k3_second(x) + self.k1(x) + self.ident(x))


class Stage(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = Block()
        self.second = Block()

    def forward(self, x):
        return self.second(self.first(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, C, 3, padding=1)
        self.stage = Stage()
        self.head = nn.Linear(C, 4)

    def forward(self, x):
        return self.head(self.stage(self.stem(x)).mean(dim=(2, 3)))


def model():
    if bug() not in ("", "paddle_skip_eps"):
        raise ValueError(f"repbranch torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return out.mean()
