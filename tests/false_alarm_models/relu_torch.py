"""Spec: the deep residual ReLU network of relu_paddle.py with torch.nn layers (weights,
running statistics and inputs are replayed from the paddle trace).

``FA_RELU_GRAD=K`` plants a porter's bug in block K: its inner activation is a hand-written
autograd function whose forward is ReLU but whose backward leaks 1% of the gradient where
the input is negative (a LeakyReLU derivative kept from an earlier version). The forward pass
is bit-identical to the clean twin; only gradients show it.
"""

import os

import torch

WIDTH, BLOCKS, BATCH = 128, 16, 64
LEAKY_BLOCK = int(os.environ.get("FA_RELU_GRAD", "-1"))


class _LeakyBackwardReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp_min(0)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return torch.where(x > 0, grad, 0.01 * grad)


class LeakyBackwardReLU(torch.nn.Module):
    def forward(self, x):
        return _LeakyBackwardReLU.apply(x)


class Block(torch.nn.Module):
    def __init__(self, leaky: bool) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(WIDTH, WIDTH)
        self.bn1 = torch.nn.BatchNorm1d(WIDTH)
        self.fc2 = torch.nn.Linear(WIDTH, WIDTH)
        self.bn2 = torch.nn.BatchNorm1d(WIDTH)
        self.relu = torch.nn.ReLU()
        self.act = LeakyBackwardReLU() if leaky else self.relu

    def forward(self, x):
        return self.relu(x + self.bn2(self.fc2(self.act(self.bn1(self.fc1(x))))))


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(k == LEAKY_BLOCK) for k in range(BLOCKS)])
        self.head = torch.nn.Linear(WIDTH, 10)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def model():
    return Net().eval()


def inputs():
    return (torch.zeros(BATCH, WIDTH),)


def loss(out):
    return (out**2).mean()
