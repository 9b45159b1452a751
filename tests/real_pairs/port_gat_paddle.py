"""Hand-written port, paddle side: a tiny 2-layer Graph Attention Network (written by "person A").

One graph of 10 nodes, 12 input features per node, a dense 0/1 adjacency [10, 10] (symmetric, with
self loops), both given to forward. Layer 1: 4 heads of 8, concatenated (-> 32), ELU. Layer 2: 1 head
of 5 classes, heads averaged. Attention scores e_ij = LeakyReLU_0.2(a_dst . Wh_i + a_src . Wh_j) for
target node i and neighbour j, softmax over the neighbours j of i. Output: log_softmax [10, 5].
Dropout p=0.6 on the features and on the attention coefficients (inactive: eval mode).

Paddle idioms on this side:
- root `GAT`: `conv1`, `conv2` (`GATLayer`), registered in call order; ELU, dropout and log_softmax
  are paddle.nn.functional calls inline in the root forward.
- `GATLayer` (PGL / DGL style): the projection is a RAW weight `weight` [in, heads * out]
  (create_parameter, XavierUniform) used with paddle.matmul; the attention vectors are TWO separate
  parameters `att_src` and `att_dst`, each [1, heads, out]; `bias` [heads * out] (concat) or [out]
  (mean); `leaky_relu` = nn.LeakyReLU(0.2) module. The scores are laid out [heads, N_i, N_j]; the
  non-edges are masked ADDITIVELY with -1e9 * (1 - adj), then F.softmax(axis=-1), F.dropout,
  paddle.matmul with the per-head features.

The torch side (port_gat_torch.py) was written independently: an nn.Linear projection, ONE packed
attention parameter `att` [heads, 2 * out] (a_dst | a_src halves, pyGAT style), einsums, a
masked_fill(-inf) mask, nn.Dropout / nn.ELU modules.

PADIFF_BUG names planted on this side (see port_gat_truth.json):
  paddle_leaky_default -> the layer's activation built as nn.LeakyReLU() without the slope, i.e.
                          paddle's default negative_slope 0.01 instead of GAT's 0.2
  paddle_softmax_axis  -> the masked scores are normalised with F.softmax(axis=1) (over the target
                          nodes i, per column) instead of axis=-1 (over the neighbours j)
The torch side's bug names are accepted and ignored; any other name raises ValueError.
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

N_NODES, IN_DIM, HIDDEN, HEADS, N_CLASSES = 10, 12, 8, 4, 5
DROPOUT = 0.6
OWN_BUGS = {"paddle_leaky_default", "paddle_softmax_axis"}
OTHER_BUGS = {"torch_att_halves_swapped"}


class GATLayer(nn.Layer):
    def __init__(self, in_dim, out_dim, num_heads, concat=True, leaky_default=False, softmax_axis=-1):
        super().__init__()
        self.out_dim, self.num_heads, self.concat = out_dim, num_heads, concat
        self.softmax_axis = softmax_axis
        self.weight = self.create_parameter([in_dim, num_heads * out_dim],
                                            default_initializer=nn.initializer.XavierUniform())
        self.att_src = self.create_parameter([1, num_heads, out_dim],
                                             default_initializer=nn.initializer.Normal(0.0, 0.5))
        self.att_dst = self.create_parameter([1, num_heads, out_dim],
                                             default_initializer=nn.initializer.Normal(0.0, 0.5))
        self.bias = self.create_parameter([num_heads * out_dim if concat else out_dim], is_bias=True,
                                          default_initializer=nn.initializer.Normal(0.0, 0.1))
        self.leaky_relu = nn.LeakyReLU() if leaky_default else nn.LeakyReLU(0.2)

    def forward(self, x, adj):
        n = x.shape[0]
        h = paddle.matmul(x, self.weight).reshape([n, self.num_heads, self.out_dim])  # [N, H, D]
        score_src = (h * self.att_src).sum(axis=-1)  # [N, H]  (node as neighbour j)
        score_dst = (h * self.att_dst).sum(axis=-1)  # [N, H]  (node as target i)
        e = score_dst.transpose([1, 0]).unsqueeze(-1) + score_src.transpose([1, 0]).unsqueeze(1)  # [H, i, j]
        e = self.leaky_relu(e)
        e = e + (1.0 - adj.unsqueeze(0)) * -1e9
        alpha = F.softmax(e, axis=self.softmax_axis)
        alpha = F.dropout(alpha, p=DROPOUT, training=self.training)
        out = paddle.matmul(alpha, h.transpose([1, 0, 2]))  # [H, N, D]
        if self.concat:
            out = out.transpose([1, 0, 2]).reshape([n, self.num_heads * self.out_dim])
        else:
            out = out.mean(axis=0)
        return out + self.bias


class GAT(nn.Layer):
    def __init__(self, leaky_default=False, softmax_axis=-1):
        super().__init__()
        kw = dict(leaky_default=leaky_default, softmax_axis=softmax_axis)
        self.conv1 = GATLayer(IN_DIM, HIDDEN, HEADS, concat=True, **kw)
        self.conv2 = GATLayer(HEADS * HIDDEN, N_CLASSES, 1, concat=False, **kw)

    def forward(self, x, adj):
        x = F.dropout(x, p=DROPOUT, training=self.training)
        x = F.elu(self.conv1(x, adj))
        x = F.dropout(x, p=DROPOUT, training=self.training)
        x = self.conv2(x, adj)
        return F.log_softmax(x, axis=-1)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_gat paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = GAT(leaky_default=bug == "paddle_leaky_default", softmax_axis=1 if bug == "paddle_softmax_axis" else -1)
    m.eval()
    return m


def _graph():
    rng = np.random.default_rng(21)
    x = rng.standard_normal((N_NODES, IN_DIM)).astype("float32")
    upper = np.triu(rng.random((N_NODES, N_NODES)) < 0.3, 1)
    adj = (upper | upper.T | np.eye(N_NODES, dtype=bool)).astype("float32")
    labels = rng.integers(0, N_CLASSES, N_NODES).astype("int64")
    return x, adj, labels


def inputs():
    x, adj, _ = _graph()
    return (paddle.to_tensor(x), paddle.to_tensor(adj)), {}


def loss(output):
    # log-probabilities [10, 5]: NLL against fixed labels
    labels = paddle.to_tensor(_graph()[2])
    return F.nll_loss(output, labels)
