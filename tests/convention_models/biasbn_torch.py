"""biasbn: a convolution with a bias feeding a train-mode BatchNorm, which removes each
channel's batch mean: the bias's gradient is a sum that cancels to zero (rounding alone), on
both sides. A bias after it (the head's) receives a sum that does not cancel; one bug scales its
gradient with a hook, another the norm's scale's, forward untouched. Torch side of biasbn_paddle.py."""
import numpy as np
import torch
from _common import bug, image
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.act = nn.ReLU()
        self.head = nn.Conv2d(8, 4, 1)

    def forward(self, x):
        y = self.bn(self.conv(x))
        return self.head(self.act(y))


def model():
    if bug() not in ("", "paddle_head_bias_grad", "paddle_norm_scale_grad"):
        raise ValueError(f"biasbn torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    m = Net()
    rng = np.random.default_rng(5)
    with torch.no_grad():
        m.conv.bias.copy_(torch.from_numpy(rng.standard_normal(8).astype("float32")))
    m.train()
    return m


def inputs():
    return torch.from_numpy(image())


def loss(out):
    return (out ** 2).mean()
