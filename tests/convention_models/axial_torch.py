"""The axial attention of axial_paddle.py written the way another library writes it: a
``RowAttention`` with separate ``q``, ``k``, ``v`` Linears and a ``ColumnAttention`` with one fused
``to_qkv``, each returning its context; the block sums them and projects.

PADIFF_BUG: none of its own (paddle_ffn_tanh is accepted and ignored)."""
import numpy as np
import torch
import torch.nn.functional as F
from _common import bug
from torch import nn

D, H, N, G = 16, 2, 2, 4
HD = D // H


def heads(t):
    return t.unflatten(-1, (H, HD)).transpose(-3, -2)  # [..., L, D] -> [..., H, L, HD]


def merge(t):
    return t.transpose(-3, -2).flatten(-2)


class RowAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v = nn.Linear(D, D), nn.Linear(D, D), nn.Linear(D, D)

    def forward(self, x):
        return merge(F.scaled_dot_product_attention(heads(self.q(x)), heads(self.k(x)), heads(self.v(x))))


class ColumnAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.to_qkv = nn.Linear(D, 3 * D)

    def forward(self, x):
        q, k, v = self.to_qkv(x.transpose(1, 2)).chunk(3, dim=-1)
        return merge(F.scaled_dot_product_attention(heads(q), heads(k), heads(v))).transpose(1, 2)


class AxialBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_attn = nn.LayerNorm(D)
        self.row = RowAttention()
        self.column = ColumnAttention()
        self.out = nn.Linear(D, D)
        self.ln_mlp = nn.LayerNorm(D)
        self.mlp = nn.Sequential(nn.Linear(D, 2 * D), nn.GELU(), nn.Linear(2 * D, D))

    def forward(self, x):
        y = self.ln_attn(x)
        x = x + self.out(self.row(y) + self.column(y))
        return x + self.mlp(self.ln_mlp(x))


class Axial(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([AxialBlock() for _ in range(N)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def model():
    if bug() not in ("", "paddle_ffn_tanh"):
        raise ValueError(f"axial torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Axial().eval()


def inputs():
    x = np.random.default_rng(0).standard_normal((2, G, G, D)).astype("float32")
    return (torch.tensor(x),), {}


def loss(out):
    return out.pow(2).mean()
