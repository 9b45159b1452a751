"""Spec: y = x @ W (the seeds' case), paddle side. REFEREE_STD sets the N(0, std) of x and W."""

import os

import numpy as np
import paddle

STD = float(os.environ.get("REFEREE_STD", "1"))


class MatMul(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.proj = paddle.nn.Linear(768, 768, bias_attr=False)

    def forward(self, x):
        return self.proj(x)


def model():
    m = MatMul()
    w = np.random.default_rng(1).normal(0.0, STD, (768, 768)).astype("float32")
    m.proj.weight.set_value(w)
    return m


def inputs():
    return (paddle.to_tensor(np.random.default_rng(0).normal(0.0, STD, (32, 768)).astype("float32")),)
