"""A small MLP trained with dropout and AdamW (bench/long_run.py), torch side."""
import numpy as np
import torch
from torch import nn

D, B = 256, 32


def model():
    torch.manual_seed(0)
    layers = []
    for _ in range(4):
        layers += [nn.Linear(D, D), nn.GELU(), nn.Dropout(0.1), nn.LayerNorm(D)]
    return nn.Sequential(*layers, nn.Linear(D, 8)).train()


def inputs():
    return torch.from_numpy(np.random.default_rng(0).standard_normal((B, D)).astype("float32"))


def loss(out):
    return (out**2).mean()


def optimizer(m):
    return torch.optim.AdamW(m.parameters(), lr=1e-3, weight_decay=0.01)
