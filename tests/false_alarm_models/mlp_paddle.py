"""Spec: a GPT-style MLP stack with paddle.nn layers, paddle side.

Each block is ``x + fc2(GELU(fc1(LayerNorm(x))))`` (hidden 64, feed-forward 256); the
torch twin is mlp_torch.py (``FA_TANH_GELU`` plants tanh-approximate GELU there).
"""

import numpy as np
import paddle

HIDDEN, FF, BLOCKS, BATCH, SEQ = 64, 256, 3, 4, 16
LOSS_OFFSET = 0.53  # a constant term of the loss (an entropy of smoothed labels, say)


class Block(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.ln = paddle.nn.LayerNorm(HIDDEN)
        self.fc1 = paddle.nn.Linear(HIDDEN, FF)
        self.act = paddle.nn.GELU()
        self.fc2 = paddle.nn.Linear(FF, HIDDEN)

    def forward(self, x):
        return x + self.fc2(self.act(self.fc1(self.ln(x))))


class MLP(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = paddle.nn.LayerList([Block() for _ in range(BLOCKS)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def model():
    paddle.seed(0)
    return MLP()


def inputs():
    x = np.random.default_rng(0).standard_normal((BATCH, SEQ, HIDDEN)).astype("float32")
    return (paddle.to_tensor(x),)


def loss(out):
    # accumulated in float64 on both sides; the constant term is a float32 literal here, so
    # even the float64 referee run of this model adds float32(0.53), the torch twin 0.53:
    # the two float64 runs differ by one ulp of a float32 constant (~3e-8), far below fp32 rounding
    return (out.astype("float64") ** 2).mean() * 0.01 + float(np.float32(LOSS_OFFSET))
