"""Hand-written port, paddle side: a tiny GraphSAGE node classifier, mean aggregator (written by "person A").

Inputs (positional): node features `x` [10, 8] float32 (numpy rng seed 23, standard normal) and
`edge_index` [2, 27] int64 (row 0 = source, row 1 = target; a fixed DIRECTED graph without
self-loops or duplicate edges; node 9 has outgoing edges only, so its neighbourhood is empty and
its neighbour mean is 0). Output: class logits [10, 4].

One SAGE layer (messages flow source -> target, the mean is over a node's IN-neighbours):
    h_N(v) = mean_{u: (u, v) in E} h_u                  (0 when v has no in-neighbour)
    h'_v   = W_self h_v + b + W_neigh h_N(v)
    h'_v   = relu(h'_v)                                 (hidden layers only)
    h'_v   = h'_v / max(||h'_v||_2, 1e-12)              (every layer)
Three layers 8 -> 16 -> 16 -> 16 (relu on the first two), then a classifier Linear(16, 4).

Paddle idioms on this side (PGL style):
- root `GraphSAGE`: `convs` = LayerList of three `SAGEConv` (iterated, never called), then
  `classifier` nn.Linear(16, 4). The forward splits edge_index into `src` / `dst` rows and passes
  them to every conv.
- `SAGEConv`: TWO Linears whose outputs are added: `self_linear` (with the bias) and
  `neigh_linear` (bias_attr=False). The neighbour mean is paddle.geometric.send_u_recv(x, src,
  dst, reduce_op="mean") inline in the forward (no aggregator module); relu (F.relu) and the L2
  normalisation (F.normalize) are inline too, switched by constructor flags.
- model() gives the biases trained-looking seeded values (rng seed 29), so no bias is zero.

The torch side (port_graphsage_torch.py) was written independently: a row-normalised dense
adjacency built once per forward by a module of its own, ONE Linear over concat([self,
neighbour mean]) per layer, an activation module per layer.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_agg_sum      -> send_u_recv is called without reduce_op, so it uses paddle's default
                         "sum": every layer sums its in-neighbours instead of averaging them
  paddle_last_no_norm -> the last SAGEConv is built with normalize=False ("the classifier comes
                         next"), so the embedding fed to the classifier is not L2-normalised
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IN_DIM, HIDDEN, N_CLASSES, N_NODES = 8, 16, 4, 10
OWN_BUGS = {"paddle_agg_sum", "paddle_last_no_norm"}
OTHER_BUGS = {"torch_adj_transposed", "torch_leaky_act"}

# directed edges (source, target); node 9 is never a target
EDGES = [(0, 1), (0, 3), (1, 2), (1, 4), (2, 0), (2, 5), (3, 1), (3, 6), (4, 2), (4, 7),
         (5, 3), (5, 8), (6, 0), (6, 4), (7, 5), (7, 6), (8, 7), (8, 1), (9, 0), (9, 8),
         (9, 2), (1, 6), (3, 8), (5, 0), (2, 7), (6, 8), (4, 3)]


class SAGEConv(nn.Layer):
    def __init__(self, in_dim, out_dim, act=True, normalize=True, reduce_op="mean"):
        super().__init__()
        self.act, self.normalize, self.reduce_op = act, normalize, reduce_op
        self.self_linear = nn.Linear(in_dim, out_dim)
        self.neigh_linear = nn.Linear(in_dim, out_dim, bias_attr=False)

    def forward(self, x, src, dst):
        if self.reduce_op is None:
            neigh = paddle.geometric.send_u_recv(x, src, dst, out_size=x.shape[0])
        else:
            neigh = paddle.geometric.send_u_recv(x, src, dst, reduce_op=self.reduce_op, out_size=x.shape[0])
        h = self.self_linear(x) + self.neigh_linear(neigh)
        if self.act:
            h = F.relu(h)
        if self.normalize:
            h = F.normalize(h, p=2, axis=1)
        return h


class GraphSAGE(nn.Layer):
    def __init__(self, agg_sum=False, last_no_norm=False):
        super().__init__()
        reduce_op = None if agg_sum else "mean"
        self.convs = nn.LayerList([
            SAGEConv(IN_DIM, HIDDEN, act=True, reduce_op=reduce_op),
            SAGEConv(HIDDEN, HIDDEN, act=True, reduce_op=reduce_op),
            SAGEConv(HIDDEN, HIDDEN, act=False, normalize=not last_no_norm, reduce_op=reduce_op),
        ])
        self.classifier = nn.Linear(HIDDEN, N_CLASSES)

    def forward(self, x, edge_index):
        src, dst = edge_index[0], edge_index[1]
        for conv in self.convs:
            x = conv(x, src, dst)
        return self.classifier(x)


def _trained_look(m):
    rng = np.random.default_rng(29)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.Linear) and layer.bias is not None:
            layer.bias.set_value(rng.normal(0.0, 0.2, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_graphsage paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = GraphSAGE(agg_sum=bug == "paddle_agg_sum", last_no_norm=bug == "paddle_last_no_norm")
    _trained_look(m)
    m.eval()
    return m


def _data():
    rng = np.random.default_rng(23)
    x = rng.standard_normal((N_NODES, IN_DIM)).astype("float32")
    edge_index = np.array(EDGES, dtype="int64").T.copy()
    return x, edge_index


def inputs():
    x, edge_index = _data()
    return (paddle.to_tensor(x), paddle.to_tensor(edge_index)), {}


def loss(output):
    # class logits [10, 4]
    return (output**2).mean()
