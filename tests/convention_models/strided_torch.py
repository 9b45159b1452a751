"""Torch side of strided_paddle.py: torchvision's RegNet layout, the shortcut ``proj`` first.

PADIFF_BUG names of this side: none (the paddle side's are accepted and ignored)."""
import torch
import torch.nn.functional as F
from _common import bug, image
from torch import nn

CIN, C = 3, 8
BUGS = ("", "paddle_short_eps")


def conv_bn(cin, cout, k, stride=1):
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, bias=False), nn.BatchNorm2d(cout))


class Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = conv_bn(CIN, C, 1)
        self.b = conv_bn(C, C, 3, stride=2)
        self.c = conv_bn(C, C, 1)

    def forward(self, x):
        return self.c(F.relu(self.b(F.relu(self.a(x)))))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = conv_bn(CIN, C, 1, stride=2)
        self.f = Residual()

    def forward(self, x):
        return F.relu(self.proj(x) + self.f(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = Block()
        self.fc = nn.Linear(C, 5)

    def forward(self, x):
        return self.fc(self.trunk(x).mean(dim=(2, 3)))


def model():
    if bug() not in BUGS:
        raise ValueError(f"strided torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return out.pow(2).mean()
