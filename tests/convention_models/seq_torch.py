"""The VGG-style Sequential of seq_paddle.py, torch side. PADIFF_BUG=no_relu: the second
ReLU (features.5) replaced by ``nn.Identity``, a slot of another type whose output equals
its input."""
import torch
from _common import bug, image
from torch import nn


def model():
    torch.manual_seed(0)
    m = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
        nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
    )
    if bug() == "no_relu":
        m[5] = nn.Identity()
    return m.eval()


def inputs():
    return torch.from_numpy(image())


def loss(out):
    return (out**2).mean()
