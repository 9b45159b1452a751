"""Torch side of patchrows_paddle.py: the patch embedding as a Conv2d with stride = kernel = patch."""
import torch
from _common import bug, image
from torch import nn

P, C, D = 4, 3, 16


class Stem(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(C, D, kernel_size=P, stride=P)

    def forward(self, x):
        return self.conv(x).flatten(2).transpose(1, 2)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = Stem()
        self.ln = nn.LayerNorm(D)
        self.fc = nn.Linear(D, 5)

    def forward(self, x):
        return self.fc(self.ln(self.stem(x)).mean(1))


def model():
    if bug() not in ("", "paddle_patch_cols_rows"):
        raise ValueError(f"patchrows torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return out.mean()
