"""Spec: a Linear, a softmax and a Linear, paddle side (the twin of fixed32_torch.py, whose softmax
fixes float32 in its own code)."""

import numpy as np
import paddle
import paddle.nn.functional as F


class Head(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.score = paddle.nn.Linear(8, 8)
        self.out = paddle.nn.Linear(8, 4)

    def forward(self, x):
        return self.out(F.softmax(self.score(x), axis=-1))


def model():
    paddle.seed(0)
    return Head()


def inputs():
    return (paddle.to_tensor(np.random.default_rng(0).normal(size=(3, 8)).astype("float32")),)
