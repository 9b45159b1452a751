"""A norm moved across a block boundary, torch side (see moved_paddle.py): block 0 holds the
input norm ``ln0``, registered after its own norm and called first."""
import numpy as np
import torch
import torch.nn.functional as F
from _common import bug
from torch import nn

B, S, D = 2, 5, 8


class Block(nn.Module):
    def __init__(self, first=False):
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.fc = nn.Linear(D, D + 1)
        self.out = nn.Linear(D + 1, D)
        if first:
            self.ln0 = nn.LayerNorm(D)

    def forward(self, x):
        if hasattr(self, "ln0"):
            x = self.ln0(x)
        return self.out(F.gelu(self.fc(self.ln(x))))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block(first=True), Block()])
        self.ln_out = nn.LayerNorm(D)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.ln_out(x)


def model():
    torch.manual_seed(0)
    assert bug() in ("", "paddle_skip_pre"), bug()
    return Model()


def inputs():
    return (torch.from_numpy(np.random.default_rng(5).standard_normal((B, S, D)).astype("float32")),), {}


def loss(out):
    return (out * out).mean()
