"""Torch side of hoisted_paddle.py: one ``time_proj`` at the top for every block's time term
(the blocks' channels one after the other, in call order), and ``nn.MultiheadAttention`` over
the pixels.

PADIFF_BUG (this side): torch_norm_eps -> the second down block's GroupNorm uses eps 1e-2."""
import math

import numpy as np
import torch
import torch.nn.functional as F
from _common import bug, image
from torch import nn

C, T, F0 = 8, 16, 8
BUGS = ("", "paddle_attn_unscaled", "torch_norm_eps")


class ResBlock(nn.Module):
    def __init__(self, cin, cout, eps=1e-5):
        super().__init__()
        self.norm = nn.GroupNorm(4, cin, eps=eps)
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)

    def forward(self, x, term):
        return self.conv(F.silu(self.norm(x))) + term[:, :, None, None]


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.pre_norm = nn.GroupNorm(4, 2 * C)
        self.mha = nn.MultiheadAttention(2 * C, 1, batch_first=True)

    def forward(self, x):
        b, c, h, w = x.shape
        tokens = self.pre_norm(x).flatten(2).transpose(1, 2)
        out, _ = self.mha(tokens, tokens, tokens, need_weights=False)
        return x + out.transpose(1, 2).reshape(b, c, h, w)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.time_mlp = nn.Linear(F0, T)
        self.sizes = [C, 2 * C, 2 * C, C]  # each block's time term, in call order
        self.time_proj = nn.Linear(T, sum(self.sizes))
        self.stem = nn.Conv2d(3, C, 3, padding=1)
        self.downs = nn.ModuleList([ResBlock(C, C), ResBlock(C, 2 * C, eps=1e-2 if bug() == "torch_norm_eps" else 1e-5)])
        self.mid = ResBlock(2 * C, 2 * C)
        self.attention = SelfAttention()
        self.ups = nn.ModuleList([ResBlock(2 * C, C)])
        self.head = nn.Conv2d(C, 3, 3, padding=1)

    def forward(self, x, t):
        freqs = torch.exp(-math.log(1000.0) * torch.arange(F0 // 2, dtype=torch.float32) / (F0 // 2))
        angles = t[:, None] * freqs[None]
        temb = self.time_mlp(torch.cat([angles.sin(), angles.cos()], dim=-1))
        terms = self.time_proj(F.silu(temb)).split(self.sizes, dim=1)
        h = self.stem(x)
        for block, term in zip(self.downs, terms):
            h = block(h, term)
        h = self.attention(self.mid(h, terms[2]))
        return self.head(self.ups[0](h, terms[3]))


def model():
    if bug() not in BUGS:
        raise ValueError(f"hoisted torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(image()), torch.from_numpy(np.array([3.0, 11.0], "float32"))), {}


def loss(out):
    return out.pow(2).mean()
