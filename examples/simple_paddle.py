"""Spec file: the PaDiff README's SimpleLayer in Paddle (x -> linear1 -> relu -> +x -> linear2)."""

import numpy as np
import paddle


class SimpleLayer(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear1 = paddle.nn.Linear(100, 100)
        self.linear2 = paddle.nn.Linear(100, 10)
        self.act = paddle.nn.ReLU()

    def forward(self, x):
        residual = x
        x = self.linear1(x)
        x = self.act(x)
        x = x + residual
        x = self.linear2(x)
        return x


def model():
    paddle.seed(2024)
    return SimpleLayer()


def inputs():
    x = np.random.default_rng(0).random((100, 100), dtype=np.float32)
    return (paddle.to_tensor(x),)


def optimizer(model):
    return paddle.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())
