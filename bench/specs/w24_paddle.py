"""W24 in paddle: 24 x (Linear 1024 + LayerNorm + GELU), input [16, 128, 1024]."""

import os

import numpy as np
import paddle

N = int(os.environ.get("W24_LAYERS", "24"))
D = int(os.environ.get("W24_DIM", "1024"))


class Block(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(D, D)
        self.norm = paddle.nn.LayerNorm(D)
        self.act = paddle.nn.GELU()

    def forward(self, x):
        return self.act(self.norm(self.linear(x)))


def model():
    paddle.seed(0)
    return paddle.nn.Sequential(*[Block() for _ in range(N)])


def inputs():
    x = np.random.default_rng(0).standard_normal((16, 128, D)).astype("float32")
    return (paddle.to_tensor(x),)


def loss(out):
    return (out**2).mean()
