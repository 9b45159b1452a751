"""Torch side of rotary_paddle.py: the rotary table built inline in the attention, projections
named ``wq``, ``wk``, ``wv``, ``wo``.

PADIFF_BUG (this side): torch_scale_dim -> scores scaled by 1/sqrt(model width)."""
import math

import torch
from _common import bug, hidden
from torch import nn

D, HEADS, N = 16, 2, 2
HD = D // HEADS
BUGS = ("", "paddle_rope_base", "torch_scale_dim")


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.wq = nn.Linear(D, D)
        self.wk = nn.Linear(D, D)
        self.wv = nn.Linear(D, D)
        self.wo = nn.Linear(D, D)

    def forward(self, x):
        b, s, _ = x.shape
        q = self.wq(x).view(b, s, HEADS, HD).transpose(1, 2)
        k = self.wk(x).view(b, s, HEADS, HD).transpose(1, 2)
        v = self.wv(x).view(b, s, HEADS, HD).transpose(1, 2)
        inv_freq = 1.0 / 10000.0 ** (torch.arange(0, HD, 2, dtype=torch.float32) / HD)
        freqs = torch.outer(torch.arange(s, dtype=torch.float32), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        q = q * emb.cos() + rotate_half(q) * emb.sin()
        k = k * emb.cos() + rotate_half(k) * emb.sin()
        scale = math.sqrt(D if bug() == "torch_scale_dim" else HD)
        scores = q @ k.transpose(-2, -1) / scale
        causal = torch.triu(torch.full((s, s), -1e9), diagonal=1)
        out = torch.softmax(scores + causal, dim=-1) @ v
        return self.wo(out.transpose(1, 2).reshape(b, s, D))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.attention = SelfAttention()

    def forward(self, x):
        return x + self.attention(self.ln(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(N)])
        self.out = nn.Linear(D, 4)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.out(x)


def model():
    if bug() not in BUGS:
        raise ValueError(f"rotary torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()),), {}


def loss(out):
    return out.pow(2).mean()
