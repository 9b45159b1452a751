"""Torch side of crossfused_paddle.py: the first block with separate query, key and value
Linears, the second with one fused q|k|v Linear.

PADIFF_BUG (this side): torch_first_softmax_axis -> the first block normalises its scores over
the queries instead of the keys."""
import torch
from _common import bug, hidden
from torch import nn

D = 16
BUGS = ("", "paddle_scale_sqrt_d", "torch_first_softmax_axis")


def attend(q, k, v, dim=-1):
    return torch.softmax(q @ k.transpose(1, 2) * D ** -0.5, dim=dim) @ v


class SplitAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.query = nn.Linear(D, D)
        self.key = nn.Linear(D, D)
        self.value = nn.Linear(D, D)
        self.out = nn.Linear(D, D)

    def forward(self, x):
        h = self.ln(x)
        dim = 1 if bug() == "torch_first_softmax_axis" else -1
        return x + self.out(attend(self.query(h), self.key(h), self.value(h), dim))


class PackedAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.in_proj = nn.Linear(D, 3 * D)
        self.out = nn.Linear(D, D)

    def forward(self, x):
        q, k, v = self.in_proj(self.ln(x)).chunk(3, dim=-1)
        return x + self.out(attend(q, k, v))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([SplitAttention(), PackedAttention()])
        self.classifier = nn.Linear(D, 4)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.classifier(x)


def model():
    if bug() not in BUGS:
        raise ValueError(f"crossfused torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()),), {}


def loss(out):
    return out.pow(2).mean()
