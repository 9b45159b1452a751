"""Hand-written port, torch side: a Graph Isomorphism Network graph classifier (written by "person B").

The same math as port_gin_paddle.py, re-implemented by hand in the style of the authors'
powerful-gnns code, with dense matrices instead of scatter: inputs node features x [12, 6],
edge_index [2, 30] (row 0 = source, row 1 = target) and the graph id per node batch [12]
(positional); output class scores [3, 4].

  adj  = dense [N, N] with adj[target, source] += 1 per edge (index_put_, accumulate=True)
  per layer l: h <- relu( MLP_l( (adj + (1 + eps[l]) I) @ h ) )
  pool = one-hot [n_graphs, N] from batch;  score = sum_l head_l( pool @ h_l )

Torch idioms on this side:
- root `GraphIsomorphismNet` registers ONE `eps` nn.Parameter of shape [3] (one entry per layer,
  as in powerful-gnns) FIRST, then `linears_prediction` (ModuleList of 3 Linear(16, 4), one head
  per layer, scores summed), then `gin_layers` (ModuleList of 3 `DenseGINConv`). The adjacency,
  the (1 + eps) self-loop diagonal, the pooling matrix and the outer relu are inline in the root
  forward; eps never enters a layer module as a parameter -- each layer gets its own
  adj + (1 + eps[l]) I.
- `DenseGINConv(h, adj)` registers `mlp` (an `MLP`) and computes mlp(adj @ h).
- `MLP` (powerful-gnns style) registers `linears` (ModuleList of 2 Linears) and `batch_norms`
  (ModuleList of 1 BatchNorm1d); relu inline: linears[1](relu(batch_norms[0](linears[0](x)))).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_relu_before_bn -> MLP.forward applies the relu before the batch norm:
                          linears[1](batch_norms[0](relu(linears[0](x))))
  torch_bn_eps         -> the MLP's BatchNorm1d is built with eps=1e-3 (a TF-style constant)
                          instead of torch's default 1e-5 (precision-level)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

INPUT_DIM, HIDDEN_DIM, OUTPUT_DIM, NUM_LAYERS = 6, 16, 4, 3
OWN_BUGS = {"torch_relu_before_bn", "torch_bn_eps"}
OTHER_BUGS = {"paddle_scatter_reversed", "paddle_bn_batch_stats"}

EDGE_LIST = [(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2), (3, 0), (0, 2), (2, 0),
             (4, 5), (5, 4), (5, 6), (6, 4), (4, 6),
             (7, 8), (8, 7), (8, 9), (9, 8), (9, 10), (10, 9), (10, 11), (11, 10), (11, 7), (8, 10),
             (7, 9), (9, 7), (1, 3), (6, 5), (11, 9), (9, 11)]
GRAPH_IDS = [0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2]


class MLP(nn.Module):
    def __init__(self, input_dim, hidden_dim, output_dim, relu_before_bn=False, bn_eps=1e-5):
        super().__init__()
        self.relu_before_bn = relu_before_bn
        self.linears = nn.ModuleList([nn.Linear(input_dim, hidden_dim), nn.Linear(hidden_dim, output_dim)])
        self.batch_norms = nn.ModuleList([nn.BatchNorm1d(hidden_dim, eps=bn_eps)])

    def forward(self, x):
        h = self.linears[0](x)
        if self.relu_before_bn:
            h = self.batch_norms[0](F.relu(h))
        else:
            h = F.relu(self.batch_norms[0](h))
        return self.linears[1](h)


class DenseGINConv(nn.Module):
    def __init__(self, input_dim, hidden_dim, **mlp_kw):
        super().__init__()
        self.mlp = MLP(input_dim, hidden_dim, hidden_dim, **mlp_kw)

    def forward(self, h, adj):
        # adj already carries (1 + eps) on its diagonal
        return self.mlp(adj @ h)


class GraphIsomorphismNet(nn.Module):
    def __init__(self, bug=""):
        super().__init__()
        mlp_kw = dict(relu_before_bn=bug == "torch_relu_before_bn", bn_eps=1e-3 if bug == "torch_bn_eps" else 1e-5)
        self.eps = nn.Parameter(torch.zeros(NUM_LAYERS))
        self.linears_prediction = nn.ModuleList([nn.Linear(HIDDEN_DIM, OUTPUT_DIM) for _ in range(NUM_LAYERS)])
        self.gin_layers = nn.ModuleList(
            [DenseGINConv(INPUT_DIM if i == 0 else HIDDEN_DIM, HIDDEN_DIM, **mlp_kw) for i in range(NUM_LAYERS)])

    def forward(self, x, edge_index, batch):
        n = x.size(0)
        adj = torch.zeros(n, n, dtype=x.dtype)
        ones = torch.ones(edge_index.size(1), dtype=x.dtype)
        adj.index_put_((edge_index[1], edge_index[0]), ones, accumulate=True)
        num_graphs = int(batch.max()) + 1
        pool = torch.zeros(num_graphs, n, dtype=x.dtype)
        pool[batch, torch.arange(n)] = 1.0
        eye = torch.eye(n, dtype=x.dtype)

        h = x
        score = 0
        for layer in range(NUM_LAYERS):
            h = F.relu(self.gin_layers[layer](h, adj + (1 + self.eps[layer]) * eye))
            score = score + self.linears_prediction[layer](pool @ h)
        return score


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_gin torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    return GraphIsomorphismNet(bug).eval()


def _graph():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((len(GRAPH_IDS), INPUT_DIM)).astype("float32")
    edge_index = np.array(EDGE_LIST, dtype="int64").T.copy()  # [2, E]
    return x, edge_index, np.array(GRAPH_IDS, dtype="int64")


def inputs():
    return tuple(torch.from_numpy(a) for a in _graph()), {}


def loss(output):
    # graph class scores [3, 4]
    return (output**2).mean()
