"""The torch side of stages_paddle.py: ``stages.N.blocks.M`` with ``nn.MultiheadAttention``."""
import torch
from _common import hidden
from torch import nn

D, HEADS = 16, 2


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, HEADS, batch_first=True)

    def forward(self, x):
        h = self.ln(x)
        return x + self.attn(h, h, h, need_weights=False)[0]


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

    def forward(self, x):
        x = self.stages[0](x)
        return self.stages[1](self.widen(x))


def model():
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()),), {}


def loss(out):
    return (out * out).mean()
