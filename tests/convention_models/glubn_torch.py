"""Torch side of glubn_paddle.py: one Linear ``fc`` of twice the width, one ``BatchNorm1d`` over
both halves, and ``F.glu`` (value half first)."""
import torch
import torch.nn.functional as F
from _common import bug, hidden
from torch import nn

D, N = 16, 2


class Unit(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(D, 2 * D, bias=False)
        self.bn = nn.BatchNorm1d(2 * D)

    def forward(self, x):
        b, s, d = x.shape
        return F.glu(self.bn(self.fc(x.reshape(b * s, d))), dim=-1).reshape(b, s, d)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.blocks = nn.ModuleList([Unit() for _ in range(N)])

    def forward(self, x):
        for u in self.blocks:
            x = x + u(x)
        return self.ln(x)


def model():
    if bug() not in ("", "paddle_gate_bn_eps"):
        raise ValueError(f"glubn torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()),), {}


def loss(out):
    return out[..., :4].pow(2).mean()  # a LayerNorm output squared and averaged over all features is constant
