"""Spec: the MLP stack of mlp_paddle.py in torch under other module names
(``layers.K.norm/up/gelu/down`` for paddle's ``blocks.K.ln/fc1/act/fc2``): it pairs with
the paddle model through mapping_renamed.json."""

import torch

HIDDEN, FF, BLOCKS, BATCH, SEQ = 64, 256, 3, 4, 16
LOSS_OFFSET = 0.53  # a constant term of the loss (an entropy of smoothed labels, say)


class Layer(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(HIDDEN)
        self.up = torch.nn.Linear(HIDDEN, FF)
        self.gelu = torch.nn.GELU()
        self.down = torch.nn.Linear(FF, HIDDEN)

    def forward(self, x):
        return x + self.down(self.gelu(self.up(self.norm(x))))


class Stack(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList([Layer() for _ in range(BLOCKS)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def model():
    return Stack()


def inputs():
    return (torch.zeros(BATCH, SEQ, HIDDEN),)


def loss(out):
    return (out.double() ** 2).mean() * 0.01 + LOSS_OFFSET
