"""The torch side of mit_paddle.py: ``stages.N.blocks.M`` registering ``fc``, ``norm2``,
``attn`` (``nn.MultiheadAttention``), ``norm1``; a ``decoder`` list holding the head."""
import torch
from _common import hidden
from torch import nn

D, HEADS = 16, 2


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, 2 * d)
        self.norm2 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, HEADS, batch_first=True)
        self.norm1 = nn.LayerNorm(d)

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.fc(self.norm2(x))[..., : x.shape[-1]]


class Stage(nn.Module):
    def __init__(self, d, n):
        super().__init__()
        self.blocks = nn.ModuleList([Block(d) for _ in range(n)])

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stages = nn.ModuleList([Stage(D, 2), Stage(2 * D, 1)])
        self.widen = nn.Linear(D, 2 * D)
        self.decoder = nn.ModuleList([nn.Linear(D, D)])

    def forward(self, x):
        x = self.stages[0](x)
        aux = self.decoder[0](x)
        return self.stages[1](self.widen(x)), aux


def model():
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()),), {}


def loss(out):
    return (out[0] * out[0]).mean() + (out[1] * out[1]).mean()
