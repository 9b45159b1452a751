"""Hand-written port, paddle side: a Graph Isomorphism Network graph classifier (written by "person A").

Inputs (positional, all numpy constants): node features x [12, 6] float32 (rng seed 7), an
edge index [2, 30] int64 (row 0 = source, row 1 = target; most edges come in both directions,
4 are one-way -- 3->0, 1->3, 11->7, 8->10 -- so the direction matters) and a graph-id vector batch [12] int64 for a mini
batch of 3 graphs with 4, 3 and 5 nodes (sorted). Output: class scores [3, 4] (one row per
graph).

The model (Xu et al. 2019, GIN-eps with jumping-knowledge readout):
  3 GIN layers, hidden 16:  h_v <- relu( MLP( (1 + eps_l) * h_v + sum_{u -> v} h_u ) )
                            MLP = Linear -> BatchNorm1D (eval, eps 1e-5) -> ReLU -> Linear
                            eps_l learnable, one per layer
  readout: sum-pool every layer's node states per graph ([3, 16] each), concatenate the three
           ([3, 48]), one Linear(48, 4)

Paddle idioms on this side (PGL style, message passing with scatter):
- root `GINNet` registers `convs` (LayerList of 3 `GINConv`, iterated) then `readout`
  nn.Linear(48, 4). The outer relu, the per-graph sum pooling (paddle.geometric.segment_sum over
  the sorted graph ids) and the concat are inline in the root forward.
- `GINConv(x, edge_index)` registers `mlp` (nn.Sequential: Linear, BatchNorm1D, ReLU, Linear)
  then its own `eps` (create_parameter, shape [1]). Neighbour aggregation is
  paddle.geometric.send_u_recv(x, src, dst, reduce_op="sum") (gather at the source, scatter-add
  at the target), inline.
- model() gives the BN layers trained-looking affine weights / running statistics and every eps a
  trained-looking non-zero value (seeded), so that nothing is an identity.

The torch side (port_gin_torch.py) was written independently (powerful-gnns style, dense): ONE eps
vector [3] on the root folded into a dense adjacency (A + (1 + eps_l) I) built from the edge
index, an adjacency matmul inside each layer, a one-hot pooling matrix, and ONE Linear(16, 4)
head PER LAYER whose scores are summed.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_scatter_reversed -> GINConv calls send_u_recv(x, dst, src): messages flow from target
                             to source, i.e. along the reversed edges (only the 4 one-way
                             edges differ)
  paddle_bn_batch_stats   -> the MLP's BatchNorm1D is built with use_global_stats=False, so it
                             normalises with the statistics of the current node batch even in
                             eval mode
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IN_DIM, HIDDEN, N_CLASSES, N_LAYERS = 6, 16, 4, 3
OWN_BUGS = {"paddle_scatter_reversed", "paddle_bn_batch_stats"}
OTHER_BUGS = {"torch_relu_before_bn", "torch_bn_eps"}

# three graphs: nodes 0-3, 4-6, 7-11
_EDGES = [(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2), (3, 0), (0, 2), (2, 0),
          (4, 5), (5, 4), (5, 6), (6, 4), (4, 6),
          (7, 8), (8, 7), (8, 9), (9, 8), (9, 10), (10, 9), (10, 11), (11, 10), (11, 7), (8, 10),
          (7, 9), (9, 7), (1, 3), (6, 5), (11, 9), (9, 11)]
_BATCH = [0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2]


class GINConv(nn.Layer):
    def __init__(self, in_dim, out_dim, reversed_scatter=False, bn_global_stats=None):
        super().__init__()
        self.reversed_scatter = reversed_scatter
        self.mlp = nn.Sequential(
            nn.Linear(in_dim, out_dim),
            nn.BatchNorm1D(out_dim, use_global_stats=bn_global_stats),
            nn.ReLU(),
            nn.Linear(out_dim, out_dim),
        )
        self.eps = self.create_parameter([1], default_initializer=nn.initializer.Constant(0.0))

    def forward(self, x, edge_index):
        src, dst = edge_index[0], edge_index[1]
        if self.reversed_scatter:
            agg = paddle.geometric.send_u_recv(x, dst, src, reduce_op="sum")
        else:
            agg = paddle.geometric.send_u_recv(x, src, dst, reduce_op="sum")
        return self.mlp((1.0 + self.eps) * x + agg)


class GINNet(nn.Layer):
    def __init__(self, bug=""):
        super().__init__()
        kw = dict(reversed_scatter=bug == "paddle_scatter_reversed",
                  bn_global_stats=False if bug == "paddle_bn_batch_stats" else None)
        self.convs = nn.LayerList(
            [GINConv(IN_DIM if i == 0 else HIDDEN, HIDDEN, **kw) for i in range(N_LAYERS)])
        self.readout = nn.Linear(N_LAYERS * HIDDEN, N_CLASSES)

    def forward(self, x, edge_index, batch):
        h = x
        pooled = []
        for conv in self.convs:
            h = F.relu(conv(h, edge_index))
            pooled.append(paddle.geometric.segment_sum(h, batch))  # [n_graphs, HIDDEN]
        return self.readout(paddle.concat(pooled, axis=1))


def _trained_look(m):
    rng = np.random.default_rng(23)
    for conv in m.convs:
        bn = conv.mlp[1]
        bn.weight.set_value(rng.uniform(0.6, 1.4, HIDDEN).astype("float32"))
        bn.bias.set_value(rng.normal(0.0, 0.3, HIDDEN).astype("float32"))
        bn._mean.set_value(rng.normal(0.0, 0.3, HIDDEN).astype("float32"))
        bn._variance.set_value(rng.uniform(0.5, 2.0, HIDDEN).astype("float32"))
        conv.eps.set_value(rng.uniform(-0.3, 0.4, [1]).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_gin paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = GINNet(bug)
    _trained_look(m)
    m.eval()
    return m


def _graph():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((len(_BATCH), IN_DIM)).astype("float32")
    edge_index = np.array(_EDGES, dtype="int64").T.copy()  # [2, E]
    return x, edge_index, np.array(_BATCH, dtype="int64")


def inputs():
    return tuple(paddle.to_tensor(a) for a in _graph()), {}


def loss(output):
    # graph class scores [3, 4]
    return (output**2).mean()
