"""Spec: like examples/simple_torch.py but linear1 is 100 -> 50: its weights cannot take SimpleLayer's."""

import numpy as np
import torch


class NarrowModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = torch.nn.Linear(100, 50)
        self.linear2 = torch.nn.Linear(50, 10)
        self.act = torch.nn.ReLU()

    def forward(self, x):
        return self.linear2(self.act(self.linear1(x)))


def model():
    return NarrowModule()


def inputs():
    return (torch.from_numpy(np.zeros((100, 100), dtype=np.float32)),)
