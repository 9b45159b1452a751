"""Torch side of identity_paddle.py: the dropout of rate 0 is an ``nn.Identity`` and the GELU a
module of its own in an ``nn.Sequential``."""
import torch
from _common import bug, hidden
from torch import nn

D = 16


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Sequential(nn.Linear(D, D), nn.GELU())
        self.drop = nn.Identity()
        self.norm = nn.LayerNorm(D)

    def forward(self, x):
        return self.norm(self.drop(self.proj(x).mean(dim=1)))


def model():
    if bug() not in ("", "paddle_drop_on"):
        raise ValueError(f"identity torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Block().train()


def inputs():
    return (torch.from_numpy(hidden()),), {}


def loss(out):
    return out.mean()
