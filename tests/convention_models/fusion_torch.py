"""Torch side of fusion_paddle.py: one fusion tensor per path, ``top_down`` [2, 2] (row 0 the
top node, row 1 the middle one) and ``bottom_up`` [3].

PADIFF_BUG (this side): none."""
import torch
import torch.nn.functional as F
from _common import bug, image
from torch import nn

C = 3


class Fusion(nn.Module):
    def __init__(self):
        super().__init__()
        self.top_down = nn.Parameter(torch.ones(2, 2))
        self.bottom_up = nn.Parameter(torch.ones(3))
        self.conv_top = nn.Conv2d(C, C, 3, padding=1)
        self.conv_mid = nn.Conv2d(C, C, 3, padding=1)
        self.conv_out = nn.Conv2d(C, C, 3, padding=1)

    def forward(self, a, b):
        td = F.relu(self.top_down)
        td = td / (td.sum(dim=1, keepdim=True) + 1e-4)
        top = self.conv_top(td[0, 0] * a + td[0, 1] * b)
        mid = self.conv_mid(td[1, 0] * b + td[1, 1] * top)
        bu = F.relu(self.bottom_up)
        bu = bu / (bu.sum() + 1e-4)
        return self.conv_out(bu[0] * a + bu[1] * top + bu[2] * mid)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fusion = Fusion()

    def forward(self, x):
        return self.fusion(x, x * 0.5)


def model():
    if bug() not in ("", "paddle_no_norm"):
        raise ValueError(f"fusion torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return out.mean()
