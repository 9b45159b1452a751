"""The tower of tower_paddle.py as ``nn.Sequential(Linear, ReLU, Dropout(0.1), Linear)``."""
import torch
from _common import D_IN, D_OUT, LR, D, data, target
from torch import nn


def model():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(D_IN, D), nn.ReLU(), nn.Dropout(0.1), nn.Linear(D, D_OUT))
    m.train()
    return m


def inputs(step=0):
    return torch.from_numpy(data())


def loss(out):
    return ((out - torch.from_numpy(target())) ** 2).mean()


def optimizer(m):
    return torch.optim.SGD(m.parameters(), lr=LR)
