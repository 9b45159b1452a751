"""Torch side of joinup_paddle.py: the coarse map resized by an ``nn.Upsample`` module.

PADIFF_BUG (this side): torch_up_nearest -> the Upsample is built with mode "nearest"."""
import torch
from _common import bug, image
from torch import nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_full = nn.Conv2d(3, 4, 3, padding=1)
        self.c_half = nn.Conv2d(3, 4, 3, stride=2, padding=1)
        mode = "nearest" if bug() == "torch_up_nearest" else "bilinear"
        self.up = nn.Upsample(scale_factor=2, mode=mode, **({} if mode == "nearest" else {"align_corners": False}))
        self.fuse = nn.Conv2d(8, 5, 1)

    def forward(self, x):
        return self.fuse(torch.cat([self.c_full(x), self.up(self.c_half(x))], dim=1))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.decoder = Decoder()

    def forward(self, x):
        return self.decoder(x).flatten(1)


def model():
    if bug() not in ("", "torch_up_nearest"):
        raise ValueError(f"joinup torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return out.mean()
