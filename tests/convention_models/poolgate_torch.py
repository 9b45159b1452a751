"""Torch side of poolgate_paddle.py: the gate concatenates ``[mean, max]`` inline.

PADIFF_BUG (this side): torch_gate_tanh -> the last stage's gate squashes with tanh, not a
sigmoid."""
import torch
from _common import bug, image
from torch import nn

C = 4


class SpatialGate(nn.Module):
    def __init__(self, squash):
        super().__init__()
        self.conv = nn.Conv2d(2, 1, 7, padding=3)
        self.squash = squash

    def forward(self, x):
        planes = torch.cat([x.mean(dim=1, keepdim=True), x.amax(dim=1, keepdim=True)], dim=1)
        return x * self.squash(self.conv(planes))


class Unit(nn.Module):
    def __init__(self, cin, squash=torch.sigmoid):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(cin, C, 3, padding=1), nn.ReLU())
        self.spatial = SpatialGate(squash)

    def forward(self, x):
        return self.spatial(self.body(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        last = torch.tanh if bug() == "torch_gate_tanh" else torch.sigmoid
        self.units = nn.Sequential(Unit(3), Unit(C), Unit(C, last))
        self.classifier = nn.Linear(C, 5)

    def forward(self, x):
        return self.classifier(self.units(x).mean(dim=(2, 3)))


def model():
    if bug() not in ("", "torch_gate_tanh"):
        raise ValueError(f"poolgate torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return torch.from_numpy(image())


def loss(out):
    return out.mean()
