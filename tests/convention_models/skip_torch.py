"""Torch side of skip_paddle.py: the early image is made by a layer of its own class, and
the late image's layer receives the early image and adds it itself.

PADIFF_BUG (this side): torch_small_flipped -> the early image layer reads its input channels in reverse order."""
import torch
import torch.nn.functional as F
from _common import bug, image
from torch import nn

C = 8


class ToImage(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(C, 3, 1)

    def forward(self, h, skip=None):
        y = self.conv(h)
        if skip is not None:
            y = y + F.interpolate(skip, scale_factor=2, mode="nearest")
        return y


class EarlyImage(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(3, C, 1, 1))
        self.bias = nn.Parameter(torch.zeros(3))

    def forward(self, h):
        w = self.weight.flip(1) if bug() == "torch_small_flipped" else self.weight
        return F.conv2d(h, w, self.bias)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, C, 3, padding=1), nn.ReLU())
        self.early = EarlyImage()
        self.body = nn.Sequential(nn.Conv2d(C, C, 3, padding=1), nn.ReLU())
        self.late = ToImage()

    def forward(self, x):
        h = self.stem(x)
        small = self.early(F.avg_pool2d(h, 2))
        h = self.body(h)
        return self.late(h, small)


def model():
    if bug() not in ("", "torch_small_flipped"):
        raise ValueError(f"skip torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return out.mean()
