"""Hand-written port, paddle side: a tiny two-layer GATv2 node classifier (written by "person A").

Input: positional node features `x` [10, 12] (numpy rng seed 53, standard normal); the graph is
fixed: 10 nodes, 21 directed edges plus a self loop on every node. Output: per-node class scores
[10, 5].

GATv2 layer (Brody et al. 2022), for an edge j -> i (j = source, i = target):
  s_j = W_src x_j + b_src,  t_i = W_dst x_i + b_dst             (per head: [H, D])
  e_ij = a_h . LeakyReLU_0.2(s_j + t_i)                        (per head)
  alpha_ij = softmax of e_ij over the sources j of target i (incoming edges, self loop included)
  out_i = sum_j alpha_ij s_j, heads concatenated (layer 1) or averaged (layer 2), + bias.
Layer 1: 12 -> 4 heads x 8, concat (32), then ELU. Layer 2: 32 -> 2 heads x 5, head mean (5).
Eval mode, no dropout.

Paddle idioms on this side (dense, DGL-ish):
- root `GATv2Net` registers the dense boolean `adjacency` [10, 10] buffer FIRST (non-
  persistable, adjacency[i, j] = edge j -> i), then `conv1`, `conv2` (`GATv2Layer`), and passes
  the mask to each layer: conv(x, adjacency). The ELU is F.elu inline in the root.
- `GATv2Layer` registers `attn` [H, D] and `bias` first (create_parameter), then the
  projections: two Linears `proj_src` / `proj_dst` (weight [in, out]) in layer 1; layer 2 is
  built with share_weights=True: ONE Linear `proj` used for both source and target.
- The attention is computed densely on a [N_i, N_j, H, D] grid: t_i + s_j broadcast, F.leaky_relu
  inline, sum(e * attn, -1), paddle.where(mask, e, -inf), F.softmax over axis 1 (the sources),
  then paddle.einsum("ijh,jhd->ihd").
- model() gives every bias (projections and outputs) trained-looking values (seeded).

The torch side (port_gatv2_torch.py) was written independently (PyG-ish): an int64 edge list,
ONE fused [src | dst] Linear per layer (in its layer 2 both halves hold the paddle `proj`
values), an nn.LeakyReLU module, a scatter softmax over the target index, nn.ELU and nn.Dropout
modules.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_softmax_axis0 -> the masked softmax normalises over axis 0 (the targets i of each
                          source) instead of axis 1 (the sources j of each target)
  paddle_leaky_default -> F.leaky_relu is called without negative_slope, so paddle's default 0.01
                          is used instead of GATv2's 0.2
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

NUM_NODES, IN_FEATS, NUM_CLASSES = 10, 12, 5
HIDDEN, HEADS1, HEADS2 = 8, 4, 2
SLOPE = 0.2
# directed edges (source, target); a self loop is added on every node
EDGES = [
    (0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (6, 7), (7, 8), (8, 9), (9, 0),
    (2, 1), (5, 4), (7, 6), (0, 5), (3, 7), (8, 2), (6, 1), (4, 9), (9, 4), (1, 8), (5, 0),
]
OWN_BUGS = {"paddle_softmax_axis0", "paddle_leaky_default"}
OTHER_BUGS = {"torch_gatv1_order", "torch_head_mean_layout"}


def dense_adjacency():
    adj = np.eye(NUM_NODES, dtype=bool)
    for src, dst in EDGES:
        adj[dst, src] = True
    return adj


class GATv2Layer(nn.Layer):
    def __init__(self, in_dim, out_dim, heads, concat=True, share_weights=False, softmax_axis=1,
                 leaky_default=False):
        super().__init__()
        self.heads, self.out_dim, self.concat = heads, out_dim, concat
        self.share_weights = share_weights
        self.softmax_axis, self.leaky_default = softmax_axis, leaky_default
        self.attn = self.create_parameter([heads, out_dim], default_initializer=nn.initializer.XavierUniform())
        self.bias = self.create_parameter([heads * out_dim if concat else out_dim], is_bias=True)
        if share_weights:
            self.proj = nn.Linear(in_dim, heads * out_dim)
        else:
            self.proj_src = nn.Linear(in_dim, heads * out_dim)
            self.proj_dst = nn.Linear(in_dim, heads * out_dim)

    def forward(self, x, adj):
        n = x.shape[0]
        if self.share_weights:
            feat_src = feat_dst = self.proj(x)
        else:
            feat_src, feat_dst = self.proj_src(x), self.proj_dst(x)
        feat_src = feat_src.reshape([n, self.heads, self.out_dim])
        feat_dst = feat_dst.reshape([n, self.heads, self.out_dim])
        e = feat_dst.unsqueeze(1) + feat_src.unsqueeze(0)  # [N_i, N_j, H, D]
        if self.leaky_default:
            e = F.leaky_relu(e)
        else:
            e = F.leaky_relu(e, negative_slope=SLOPE)
        score = (e * self.attn).sum(-1)  # [N_i, N_j, H]
        score = paddle.where(adj.unsqueeze(-1), score, paddle.full_like(score, float("-inf")))
        alpha = F.softmax(score, axis=self.softmax_axis)
        out = paddle.einsum("ijh,jhd->ihd", alpha, feat_src)  # [N, H, D]
        if self.concat:
            out = out.reshape([n, self.heads * self.out_dim])
        else:
            out = out.mean(axis=1)
        return out + self.bias


class GATv2Net(nn.Layer):
    def __init__(self, softmax_axis=1, leaky_default=False):
        super().__init__()
        self.register_buffer("adjacency", paddle.to_tensor(dense_adjacency()), persistable=False)
        kw = {"softmax_axis": softmax_axis, "leaky_default": leaky_default}
        self.conv1 = GATv2Layer(IN_FEATS, HIDDEN, HEADS1, concat=True, **kw)
        self.conv2 = GATv2Layer(HIDDEN * HEADS1, NUM_CLASSES, HEADS2, concat=False, share_weights=True, **kw)

    def forward(self, x):
        h = F.elu(self.conv1(x, self.adjacency))
        return self.conv2(h, self.adjacency)


def _trained_look(m):
    rng = np.random.default_rng(59)
    for name, p in m.named_parameters():
        if name.endswith("bias"):
            p.set_value(rng.normal(0.0, 0.2, p.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_gatv2 paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = GATv2Net(softmax_axis=0 if bug == "paddle_softmax_axis0" else 1,
                 leaky_default=bug == "paddle_leaky_default")
    _trained_look(m)
    m.eval()
    return m


def _features():
    rng = np.random.default_rng(53)
    return rng.standard_normal((NUM_NODES, IN_FEATS)).astype("float32")


def inputs():
    return (paddle.to_tensor(_features()),), {}


def loss(output):
    # node class scores [10, 5]
    return (output**2).mean()
