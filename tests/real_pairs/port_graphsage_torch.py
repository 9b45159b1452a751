"""Hand-written port, torch side: a tiny GraphSAGE node classifier, mean aggregator (written by "person B").

The same function as port_graphsage_paddle.py, re-implemented by hand with a dense adjacency:
inputs (positional) `x` [10, 8] float32 and `edge_index` [2, 27] int64 (row 0 = source, row 1 =
target, the same directed graph), output class logits [10, 4].

Per layer: h' = L2norm(act(Lin([h | A h]))), where A is the row-normalised dense adjacency
A[v, u] = 1 / in_degree(v) for every edge u -> v (an all-zero row for node 9, which has no
in-neighbour). Three layers 8 -> 16 -> 16 -> 16 (ReLU on the first two, nn.Identity on the last),
then `fc_out` Linear(16, 4).

Torch idioms on this side:
- root `SAGENet` registers `layers` (ModuleList of three `DenseSAGELayer`), `fc_out`, then
  `mean_adj` (a `MeanAdjacency` module without parameters), and calls `mean_adj` FIRST, once per
  forward, to turn edge_index into the dense [10, 10] matrix A; every layer gets (x, A).
- `DenseSAGELayer`: ONE `lin` nn.Linear(2 * in, out) over torch.cat([x, A @ x], -1) (self
  columns first, then neighbour columns; the single bias), then its `act` module (nn.ReLU, or
  nn.Identity on the last layer), then F.normalize(p=2, dim=-1) inline.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_adj_transposed -> MeanAdjacency fills adj[src, dst] instead of adj[dst, src], so every
                          node averages its OUT-neighbours (row-normalised by out-degree)
  torch_leaky_act      -> the hidden layers' activation is nn.LeakyReLU() (default slope 0.01)
                          instead of nn.ReLU(), copied from a GAT port
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IN_FEATS, HID_FEATS, NUM_CLASSES, NUM_NODES = 8, 16, 4, 10
OWN_BUGS = {"torch_adj_transposed", "torch_leaky_act"}
OTHER_BUGS = {"paddle_agg_sum", "paddle_last_no_norm"}

EDGE_LIST = [(0, 1), (0, 3), (1, 2), (1, 4), (2, 0), (2, 5), (3, 1), (3, 6), (4, 2), (4, 7),
             (5, 3), (5, 8), (6, 0), (6, 4), (7, 5), (7, 6), (8, 7), (8, 1), (9, 0), (9, 8),
             (9, 2), (1, 6), (3, 8), (5, 0), (2, 7), (6, 8), (4, 3)]


class MeanAdjacency(nn.Module):
    def __init__(self, transposed=False):
        super().__init__()
        self.transposed = transposed

    def forward(self, edge_index, num_nodes):
        src, dst = edge_index[0], edge_index[1]
        adj = torch.zeros(num_nodes, num_nodes, dtype=torch.float32, device=edge_index.device)
        if self.transposed:
            adj[src, dst] = 1.0
        else:
            adj[dst, src] = 1.0
        deg = adj.sum(dim=1, keepdim=True).clamp(min=1.0)
        return adj / deg


class DenseSAGELayer(nn.Module):
    def __init__(self, in_feats, out_feats, act=None):
        super().__init__()
        self.lin = nn.Linear(2 * in_feats, out_feats)
        self.act = act if act is not None else nn.Identity()

    def forward(self, x, adj):
        agg = torch.matmul(adj, x)
        h = self.lin(torch.cat([x, agg], dim=-1))
        h = self.act(h)
        return F.normalize(h, p=2, dim=-1)


class SAGENet(nn.Module):
    def __init__(self, adj_transposed=False, leaky=False):
        super().__init__()
        make_act = nn.LeakyReLU if leaky else nn.ReLU
        self.layers = nn.ModuleList([
            DenseSAGELayer(IN_FEATS, HID_FEATS, make_act()),
            DenseSAGELayer(HID_FEATS, HID_FEATS, make_act()),
            DenseSAGELayer(HID_FEATS, HID_FEATS, None),
        ])
        self.fc_out = nn.Linear(HID_FEATS, NUM_CLASSES)
        self.mean_adj = MeanAdjacency(transposed=adj_transposed)

    def forward(self, x, edge_index):
        adj = self.mean_adj(edge_index, x.shape[0])
        h = x
        for layer in self.layers:
            h = layer(h, adj)
        return self.fc_out(h)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_graphsage torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = SAGENet(adj_transposed=bug == "torch_adj_transposed", leaky=bug == "torch_leaky_act")
    return m.eval()


def _data():
    rng = np.random.default_rng(23)
    x = rng.standard_normal((NUM_NODES, IN_FEATS)).astype("float32")
    edge_index = np.array(EDGE_LIST, dtype=np.int64).T.copy()
    return x, edge_index


def inputs():
    x, edge_index = _data()
    return (torch.from_numpy(x), torch.from_numpy(edge_index)), {}


def loss(output):
    # class logits [10, 4]
    return (output**2).mean()
