"""Spec file: the PaDiff README's SimpleModule in PyTorch, twin of simple_paddle.py."""

import numpy as np
import torch


class SimpleModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = torch.nn.Linear(100, 100)
        self.linear2 = torch.nn.Linear(100, 10)
        self.act = torch.nn.ReLU()

    def forward(self, x):
        residual = x
        x = self.linear1(x)
        x = self.act(x)
        x = x + residual
        x = self.linear2(x)
        return x


def model():
    torch.manual_seed(2024)
    return SimpleModule()


def inputs():
    # Replaced by the Paddle trace's recorded inputs under `padiff-trace run`.
    x = np.random.default_rng(0).random((100, 100), dtype=np.float32)
    return (torch.from_numpy(x),)


def optimizer(model):
    return torch.optim.SGD(model.parameters(), lr=0.01)
