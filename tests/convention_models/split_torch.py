"""Two towers, torch side (see split_paddle.py): the token tower registered first, a causal
depthwise Conv1d padded inside and trimmed after, ``nn.MultiheadAttention``, two one-layer
LSTMs, a ``[1]`` logit scale.

PADIFF_BUG (this side): trim_front -> the conv output is trimmed at the front instead of the
back (a causal conv that sees the future)."""
import math

import torch
import torch.nn.functional as F
from _common import B, D, V, bug, hidden, ids
from torch import nn

HEADS, K = 4, 3


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(D, 2 * D), nn.Linear(2 * D, D)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(x)))


class TokenTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        self.rnns = nn.ModuleList([nn.LSTM(D, D, 1, batch_first=True) for _ in range(2)])
        self.norm = nn.LayerNorm(D)

    def forward(self, t):
        y = self.embed(t)
        for rnn in self.rnns:
            y, _ = rnn(y)
        return self.norm(y[:, -1])


class SequenceTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(D, D, K, groups=D, padding=K - 1)
        self.norm = nn.LayerNorm(D)
        self.attn = nn.MultiheadAttention(D, HEADS, batch_first=True)
        self.ffns = nn.ModuleList([FeedForward(), FeedForward()])

    def forward(self, x):
        h = self.conv(x.transpose(1, 2))
        h = h[..., K - 1:] if bug() == "trim_front" else h[..., : -(K - 1)]
        n = self.norm(F.silu(h.transpose(1, 2)))
        x = x + self.attn(n, n, n, need_weights=False)[0]
        for f in self.ffns:
            x = f(x)
        return x.mean(dim=1)


class Towers(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = TokenTower()
        self.seq = SequenceTower()
        self.logit_scale = nn.Parameter(torch.full((1,), math.log(10.0)))

    def forward(self, x, t):
        a = F.normalize(self.seq(x), dim=-1)
        b = F.normalize(self.tok(t), dim=-1)
        return self.logit_scale.exp() * a @ b.T


def model():
    torch.manual_seed(0)
    return Towers().train()  # as the paddle side (no dropout: the same as eval)


def inputs():
    return (torch.from_numpy(hidden()), torch.from_numpy(ids()[:, :5])), {}


def loss(out):
    return F.cross_entropy(out, torch.arange(B))
