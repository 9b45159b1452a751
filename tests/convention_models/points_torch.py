"""Points and a token shift, torch side (see points_paddle.py): Linear layers on ``[b, n, c]``,
BatchNorm on the transposed points, a token shift as an ``nn.ZeroPad2d`` module.

PADIFF_BUG (this side): bn_no_transpose -> the second BatchNorm is applied to ``[b, n, c]``
without its transpose (it runs: there are as many points as channels)."""
import numpy as np
import torch
import torch.nn.functional as F
from _common import bug
from torch import nn

B, C, N, K = 2, 16, 16, 4


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.norm1 = nn.Linear(3, C), nn.BatchNorm1d(C)
        self.fc2, self.norm2 = nn.Linear(C, C), nn.BatchNorm1d(C)

    def forward(self, pts):
        h = self.fc1(pts.transpose(1, 2))
        h = F.relu(self.norm1(h.transpose(1, 2)).transpose(1, 2))
        h = self.fc2(h)
        if bug() == "bn_no_transpose":
            return F.relu(self.norm2(h))
        return F.relu(self.norm2(h.transpose(1, 2)).transpose(1, 2))


class TimeMix(nn.Module):
    def __init__(self):
        super().__init__()
        self.time_shift = nn.ZeroPad2d((0, 0, 1, -1))
        self.time_mix = nn.Parameter(torch.rand(1, 1, C))
        self.out = nn.Linear(C, C)

    def forward(self, h):
        return self.out(h * self.time_mix + self.time_shift(h) * (1 - self.time_mix))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.feat = Encoder()
        self.mixer = TimeMix()
        self.cls = nn.Linear(C, K)

    def forward(self, pts):
        return self.cls(self.mixer(self.feat(pts)).amax(dim=1))


def model():
    torch.manual_seed(0)
    assert bug() in ("", "paddle_mix_swap", "bn_no_transpose"), bug()
    return Net().eval()


def inputs():
    x = np.random.default_rng(2).standard_normal((B, 3, N)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(out):
    return (out * out).mean()
