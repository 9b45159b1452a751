"""Torch side of headstages_paddle.py: separate q, k and v projections in each stage."""
import torch
from _common import bug, hidden
from torch import nn

HEAD = 8


class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.heads = dim // HEAD
        self.q, self.k, self.v = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, s, d = x.shape

        def split(t):
            return t.view(b, s, self.heads, HEAD).transpose(1, 2)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        p = torch.softmax(q @ k.transpose(-1, -2) / HEAD**0.5, dim=-1)
        return self.proj((p @ v).transpose(1, 2).reshape(b, s, d))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Attention(16), Attention(32)])
        self.up = nn.Linear(16, 32)

    def forward(self, x):
        x = x + self.blocks[0](x)
        x = self.up(x)
        return x + self.blocks[1](x)


def model():
    if bug() not in ("", "paddle_last_no_scale"):
        raise ValueError(f"headstages torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()),)


def loss(out):
    return out.mean()
