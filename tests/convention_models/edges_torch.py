"""Torch side of edges_paddle.py: the model turns the edge list into a dense adjacency once, and
each layer multiplies by it.

PADIFF_BUG: paddle_reversed_edges (the paddle side's)."""
import numpy as np
import torch
from _common import bug
from torch import nn

N, D = 10, 16


def graph() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((N, D)).astype("float32")
    pairs = [(k, (k + 1) % N) for k in range(N)] + [(k, (k + 3) % N) for k in range(0, N, 2)]
    return x, np.array(pairs, dtype="int64").T.copy()


class GraphLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(D, D)

    def forward(self, h, adj):
        return torch.tanh(self.proj(h + adj @ h))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.gnn = nn.ModuleList([GraphLayer() for _ in range(2)])
        self.out = nn.Linear(D, 3)

    def forward(self, h, edge_index):
        adj = torch.zeros(N, N).index_put((edge_index[1], edge_index[0]), torch.ones(edge_index.shape[1]), accumulate=True)
        for layer in self.gnn:
            h = layer(h, adj)
        return self.out(h.mean(dim=0))


def model():
    if bug() not in ("", "paddle_reversed_edges"):
        raise ValueError(f"edges torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    x, e = graph()
    return (torch.from_numpy(x), torch.from_numpy(e)), {}


def loss(out):
    return out.pow(2).mean()
