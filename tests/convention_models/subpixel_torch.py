"""Torch side of subpixel_paddle.py: the depth-to-space written by hand in TensorFlow's (DCR) order.

PADIFF_BUG (this side): torch_ij_swapped -> the row and column sub-pixel offsets are swapped: an
arrangement no known order makes, which stays a bug."""
import torch
from _common import bug, image
from torch import nn

C, R = 3, 2


class Upsample(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(C, C * R * R, 3, padding=1)

    def forward(self, x):
        x = self.conv(x)
        b, _, h, w = x.shape
        x = x.view(b, R, R, C, h, w)
        order = (0, 3, 4, 2, 5, 1) if bug() == "torch_ij_swapped" else (0, 3, 4, 1, 5, 2)
        return x.permute(*order).reshape(b, C, h * R, w * R)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, C, 3, padding=1)
        self.upsample = Upsample()
        self.out = nn.Conv2d(C, 2, 3, padding=1)

    def forward(self, x):
        return self.out(self.upsample(self.stem(x)))


def model():
    if bug() not in ("", "paddle_tail_offset", "torch_ij_swapped"):
        raise ValueError(f"subpixel torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return out.mean()
