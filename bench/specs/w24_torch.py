"""W24 in torch: 24 x (Linear 1024 + LayerNorm + GELU), input [16, 128, 1024]."""

import os

import numpy as np
import torch

N = int(os.environ.get("W24_LAYERS", "24"))
D = int(os.environ.get("W24_DIM", "1024"))


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(D, D)
        self.norm = torch.nn.LayerNorm(D)
        self.act = torch.nn.GELU()

    def forward(self, x):
        return self.act(self.norm(self.linear(x)))


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(*[Block() for _ in range(N)])


def inputs():
    x = np.random.default_rng(0).standard_normal((16, 128, D)).astype("float32")
    return (torch.from_numpy(x),)


def loss(out):
    return (out**2).mean()
