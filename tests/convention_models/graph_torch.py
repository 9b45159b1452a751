"""A graph encoder with a packed head, torch side (see graph_paddle.py): the adjacency a buffer,
each layer's weight in a Linear inside it, mu | logvar in one Linear."""
import numpy as np
import torch
import torch.nn.functional as F
from _common import bug
from torch import nn

N, F_IN, H, H2, Z = 6, 5, 8, 7, 3


def adjacency() -> np.ndarray:
    a = np.eye(N, dtype="float32")
    idx = np.arange(N)
    a[idx, (idx + 1) % N] = 1.0
    a[(idx + 1) % N, idx] = 1.0
    deg = a.sum(axis=1)
    return (a / np.sqrt(np.outer(deg, deg))).astype("float32")


class GCNConv(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.lin = nn.Linear(n_in, n_out, bias=False)
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x, adj):
        return adj @ self.lin(x) + self.bias


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("adj", torch.from_numpy(adjacency()), persistent=False)
        self.conv1 = GCNConv(F_IN, H)
        self.conv2 = GCNConv(H, H2)
        self.head = nn.Linear(H2, 2 * Z)

    def forward(self, x):
        x = F.relu(self.conv1(x, self.adj))
        x = F.relu(self.conv2(x, self.adj))
        mu, logvar = self.head(x).chunk(2, dim=-1)
        return mu, logvar


def model():
    torch.manual_seed(0)
    assert bug() in ("", "paddle_self_loop"), bug()
    return Encoder()


def inputs():
    x = np.random.default_rng(1).standard_normal((N, F_IN)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(out):
    mu, logvar = out
    return (mu * mu).mean() + logvar.exp().mean()
