"""Spec: Conv2D + BatchNorm2D + ReLU + Linear head in Paddle, twin of convbn_torch.py (training mode)."""

from _envdump import dump

dump("paddle")

import numpy as np  # noqa: E402
import paddle  # noqa: E402


class ConvBN(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = paddle.nn.Conv2D(3, 4, 3, padding=1)
        self.bn = paddle.nn.BatchNorm2D(4)
        self.act = paddle.nn.ReLU()
        self.head = paddle.nn.Linear(4 * 6 * 6, 5)

    def forward(self, x):
        h = self.act(self.bn(self.conv(x)))
        return self.head(h.flatten(1))


def model():
    paddle.seed(1)
    return ConvBN()


def inputs():
    return (paddle.to_tensor(np.random.default_rng(3).standard_normal((2, 3, 6, 6)).astype("float32")),)


def loss(out):
    return (out * out).mean()
