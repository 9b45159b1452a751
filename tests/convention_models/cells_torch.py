"""The torch side of cells_paddle.py: an ``nn.Embedding`` inside a wrapper that scales, a block
without its ``GELU`` (called after it), one bidirectional ``nn.GRU``.

PADIFF_BUG (this side): torch_gelu_tanh -> the GELU after the block uses the tanh
approximation."""
import math

import torch
from _common import D, V, bug, ids
from torch import nn


class Embeddings(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb_layers = nn.ModuleList([nn.Embedding(V, D)])
        self.scale = math.sqrt(D)

    def forward(self, x):
        return self.emb_layers[0](x) * self.scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.word_emb = Embeddings()
        self.ff = nn.Sequential(nn.Linear(D, D))
        self.act = nn.GELU(approximate="tanh" if bug() == "torch_gelu_tanh" else "none")
        self.gru = nn.GRU(D, D, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * D, 4)

    def forward(self, x):
        h = self.word_emb(x)
        h = h + self.act(self.ff(h))
        y, _ = self.gru(h)
        return self.out(y)


def model():
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(ids()),), {}


def loss(out):
    return (out * out).mean()
