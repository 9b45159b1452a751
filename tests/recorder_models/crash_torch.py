"""Spec whose model raises in its second layer (after the first one was recorded)."""

import torch


class Crash(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin1 = torch.nn.Linear(4, 4)
        self.lin2 = torch.nn.Linear(4, 2)

    def forward(self, x):
        self.lin1(x)
        raise ValueError("user model bug at layer 2")  # CRASH-LINE


def model():
    return Crash()


def inputs():
    return (torch.ones(3, 4),)
