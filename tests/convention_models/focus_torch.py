"""Torch side of focus_paddle.py: one 6x6 stride-2 convolution over the raw image where paddle
stacks the pixel phases and convolves them 3x3 (as ultralytics replaced YOLOv5's Focus).

PADIFF_BUG (this side): torch_head_relu -> a ReLU after the head: a bug after the stem."""
import torch
from _common import bug, image
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 6, stride=2, padding=2, bias=False), nn.BatchNorm2d(8), nn.SiLU())
        self.body = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        y = self.fc(torch.flatten(self.body(self.stem(x)), 1))
        return torch.relu(y) if bug() == "torch_head_relu" else y


def model():
    if bug() not in ("", "paddle_phases_unknown", "torch_head_relu"):
        raise ValueError(f"focus torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return torch.from_numpy(image())


def loss(out):
    return (out**2).mean()
