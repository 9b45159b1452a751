"""Torch side of glu_paddle.py: one Linear ``proj`` of twice the width and ``F.glu`` (value half
first, gate half second)."""
import torch
import torch.nn.functional as F
from _common import bug, hidden
from torch import nn

D, N = 16, 2


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(D, D)
        self.proj = nn.Linear(D, 2 * D)
        self.ln = nn.LayerNorm(D)

    def forward(self, x):
        return self.ln(x + F.glu(self.proj(F.elu(self.inp(x))), dim=-1))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Block() for _ in range(N)])

    def forward(self, x):
        for b in self.layers:
            x = b(x)
        return x


def model():
    if bug() not in ("", "paddle_gate_tanh"):
        raise ValueError(f"glu torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()),), {}


def loss(out):
    return out.pow(2).mean()
