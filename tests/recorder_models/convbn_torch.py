"""Spec: Conv2d + BatchNorm2d + ReLU + Linear head in PyTorch, twin of convbn_paddle.py (training mode)."""

from _envdump import dump

dump("torch")

import numpy as np  # noqa: E402
import torch  # noqa: E402


class ConvBN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.act = torch.nn.ReLU()
        self.head = torch.nn.Linear(4 * 6 * 6, 5)

    def forward(self, x):
        h = self.act(self.bn(self.conv(x)))
        return self.head(h.flatten(1))


def model():
    torch.manual_seed(2)  # a different init on purpose: the replay must overwrite it
    return ConvBN()


def inputs():
    return (torch.from_numpy(np.random.default_rng(4).standard_normal((2, 3, 6, 6)).astype("float32")),)


def loss(out):
    return (out * out).mean()
