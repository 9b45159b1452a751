"""Torch side of masked_paddle.py: the same masked convolutions, the masks built here.

PADIFF_BUG (this side): torch_mask_b_first -> the first layer gets the mask with the centre tap."""
import numpy as np
import torch
import torch.nn.functional as F
from _common import bug, image
from torch import nn

C = 8


def causal_mask(c_out: int, c_in: int, k: int, with_centre: bool) -> torch.Tensor:
    m = np.ones((c_out, c_in, k, k), "float32")
    m[:, :, k // 2, k // 2 + (1 if with_centre else 0):] = 0.0
    m[:, :, k // 2 + 1:] = 0.0
    return torch.from_numpy(m)


class MaskedConv2d(nn.Conv2d):
    def __init__(self, c_in: int, c_out: int, with_centre: bool):
        super().__init__(c_in, c_out, 3, padding=1)
        self.register_buffer("mask", causal_mask(c_out, c_in, 3, with_centre))

    def forward(self, x):
        return F.conv2d(x, self.weight * self.mask, self.bias, padding=1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_a = MaskedConv2d(3, C, with_centre=bug() == "torch_mask_b_first")
        self.conv_b = MaskedConv2d(C, C, with_centre=True)
        self.proj = nn.Conv2d(C, 4, 1)

    def forward(self, x):
        return self.proj(F.relu(self.conv_b(F.relu(self.conv_a(x)))))


def model():
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return out.mean()
