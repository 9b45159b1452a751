"""Masked convolutions whose masks are persistent buffers of 0/1 entries (PixelCNN's), paddle
side (masked_torch.py is the other): a mask is a pattern each port builds from its
configuration, so it is compared, never copied from one port onto the other.

PADIFF_BUG (this side): paddle_mask_centre -> the first layer's mask keeps the centre tap."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug, image
from paddle import nn

C = 8


def causal_mask(c_out: int, c_in: int, k: int, with_centre: bool) -> np.ndarray:
    m = np.ones((c_out, c_in, k, k), "float32")
    m[:, :, k // 2, k // 2 + (1 if with_centre else 0):] = 0.0
    m[:, :, k // 2 + 1:] = 0.0
    return m


class MaskedConv(nn.Conv2D):
    def __init__(self, c_in: int, c_out: int, with_centre: bool):
        super().__init__(c_in, c_out, 3, padding=1)
        self.register_buffer("mask", paddle.to_tensor(causal_mask(c_out, c_in, 3, with_centre)))

    def forward(self, x):
        return F.conv2d(x, self.weight * self.mask, self.bias, padding=1)


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.first = MaskedConv(3, C, with_centre=bug() == "paddle_mask_centre")
        self.second = MaskedConv(C, C, with_centre=True)
        self.out = nn.Conv2D(C, 4, 1)

    def forward(self, x):
        return self.out(F.relu(self.second(F.relu(self.first(x)))))


def model():
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.mean()
