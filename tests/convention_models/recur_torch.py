"""The GRU encoder and head of recur_paddle.py in torch, whose GRU has a backward pass in eval mode.

PADIFF_BUG: paddle_head_tanh is the other side's (accepted, ignored)."""
import numpy as np
import torch
from _common import B, D, S, bug
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(D, D, batch_first=True)
        self.out = nn.Linear(D, 4)

    def forward(self, x):
        seq, _ = self.rnn(x)
        return self.out(seq[:, -1])


def model():
    if bug() not in ("", "paddle_head_tanh"):
        raise ValueError(f"recur torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    x = np.random.default_rng(1).standard_normal((B, S, D)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(out):
    return out.pow(2).mean()
