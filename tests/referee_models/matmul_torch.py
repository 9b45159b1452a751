"""Spec: y = x @ W, torch side (inputs and weights are replayed from the paddle trace)."""

import torch


class MatMul(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(768, 768, bias=False)

    def forward(self, x):
        return self.proj(x)


def model():
    return MatMul()


def inputs():
    return (torch.zeros(32, 768),)
