"""Spec: the GPT-style MLP stack of mlp_paddle.py with torch.nn layers (weights and inputs
are replayed from the paddle trace). ``FA_TANH_GELU=K`` gives block K tanh-approximate GELU
(paddle's is exact): the subtle bug."""

import os

import torch

HIDDEN, FF, BLOCKS, BATCH, SEQ = 64, 256, 3, 4, 16
LOSS_OFFSET = 0.53  # a constant term of the loss (an entropy of smoothed labels, say)
TANH_BLOCK = int(os.environ.get("FA_TANH_GELU", "-1"))


class Block(torch.nn.Module):
    def __init__(self, tanh: bool) -> None:
        super().__init__()
        self.ln = torch.nn.LayerNorm(HIDDEN)
        self.fc1 = torch.nn.Linear(HIDDEN, FF)
        self.act = torch.nn.GELU(approximate="tanh" if tanh else "none")
        self.fc2 = torch.nn.Linear(FF, HIDDEN)

    def forward(self, x):
        return x + self.fc2(self.act(self.fc1(self.ln(x))))


class MLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(k == TANH_BLOCK) for k in range(BLOCKS)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def model():
    return MLP()


def inputs():
    return (torch.zeros(BATCH, SEQ, HIDDEN),)


def loss(out):
    return (out.double() ** 2).mean() * 0.01 + LOSS_OFFSET
