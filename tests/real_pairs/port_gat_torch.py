"""Hand-written port, torch side: a tiny 2-layer Graph Attention Network (written by "person B").

The same math as port_gat_paddle.py, re-implemented by hand (pyGAT style). One graph of 10 nodes,
12 features, dense 0/1 adjacency [10, 10] with self loops (forward inputs). `hidden`: 4 heads of 8,
concatenated, ELU; `out_att`: 1 head of 5 classes, averaged; log_softmax [10, 5]. LeakyReLU(0.2)
scores, softmax over the neighbours. Dropout 0.6 (inactive: eval mode).

Torch idioms on this side:
- root `GATNet` registers `drop` (nn.Dropout), then `out_att`, then `hidden` (the output layer is
  registered BEFORE the hidden layer, called after it), then `elu` (nn.ELU module); log_softmax is
  inline (F.log_softmax).
- `GraphAttention`: ONE packed attention parameter `att` [heads, 2 * out] registered first (columns
  0:out score the TARGET node i, columns out:2*out the NEIGHBOUR j, as in the paper's
  a^T [W h_i || W h_j]), then `bias`, then `proj` = nn.Linear(in, heads * out, bias=False),
  `leakyrelu` = nn.LeakyReLU(0.2) module, `attn_drop` = nn.Dropout. Scores come from einsums, laid
  out [heads, i, j]; non-edges masked with masked_fill(adj == 0, -inf); the aggregation is an
  einsum.

PADIFF_BUG names planted on this side (see port_gat_truth.json):
  torch_att_halves_swapped -> the two halves of `att` are used the other way round: columns 0:out
                              score the neighbour j and columns out:2*out the target i
The paddle side's bug names are accepted and ignored; any other name raises ValueError.
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

N_NODES, IN_DIM, HIDDEN, HEADS, N_CLASSES = 10, 12, 8, 4, 5
DROPOUT = 0.6
OWN_BUGS = {"torch_att_halves_swapped"}
OTHER_BUGS = {"paddle_leaky_default", "paddle_softmax_axis"}


class GraphAttention(nn.Module):
    def __init__(self, in_features, out_features, n_heads, concat=True, halves_swapped=False):
        super().__init__()
        self.out_features, self.n_heads, self.concat = out_features, n_heads, concat
        self.halves_swapped = halves_swapped
        self.att = nn.Parameter(torch.empty(n_heads, 2 * out_features))
        self.bias = nn.Parameter(torch.zeros(n_heads * out_features if concat else out_features))
        self.proj = nn.Linear(in_features, n_heads * out_features, bias=False)
        self.leakyrelu = nn.LeakyReLU(0.2)
        self.attn_drop = nn.Dropout(DROPOUT)
        nn.init.xavier_uniform_(self.att, gain=1.414)

    def forward(self, h, adj):
        n, d = h.size(0), self.out_features
        wh = self.proj(h).view(n, self.n_heads, d)  # [N, H, D]
        a_i, a_j = self.att[:, :d], self.att[:, d:]
        if self.halves_swapped:
            a_i, a_j = a_j, a_i
        s_i = torch.einsum("nhd,hd->hn", wh, a_i)  # target term
        s_j = torch.einsum("nhd,hd->hn", wh, a_j)  # neighbour term
        e = self.leakyrelu(s_i.unsqueeze(2) + s_j.unsqueeze(1))  # [H, i, j]
        e = e.masked_fill(adj.unsqueeze(0) == 0, float("-inf"))
        attention = self.attn_drop(torch.softmax(e, dim=-1))
        out = torch.einsum("hij,jhd->ihd", attention, wh)  # [N, H, D]
        out = out.reshape(n, -1) if self.concat else out.mean(dim=1)
        return out + self.bias


class GATNet(nn.Module):
    def __init__(self, halves_swapped=False):
        super().__init__()
        self.drop = nn.Dropout(DROPOUT)
        self.out_att = GraphAttention(HEADS * HIDDEN, N_CLASSES, 1, concat=False, halves_swapped=halves_swapped)
        self.hidden = GraphAttention(IN_DIM, HIDDEN, HEADS, concat=True, halves_swapped=halves_swapped)
        self.elu = nn.ELU()

    def forward(self, x, adj):
        x = self.drop(x)
        x = self.elu(self.hidden(x, adj))
        x = self.drop(x)
        return F.log_softmax(self.out_att(x, adj), dim=1)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_gat torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = GATNet(halves_swapped=bug == "torch_att_halves_swapped")
    return m.eval()


def _graph():
    rng = np.random.default_rng(21)
    x = rng.standard_normal((N_NODES, IN_DIM)).astype("float32")
    upper = np.triu(rng.random((N_NODES, N_NODES)) < 0.3, 1)
    adj = (upper | upper.T | np.eye(N_NODES, dtype=bool)).astype("float32")
    labels = rng.integers(0, N_CLASSES, N_NODES).astype("int64")
    return x, adj, labels


def inputs():
    x, adj, _ = _graph()
    return (torch.from_numpy(x), torch.from_numpy(adj)), {}


def loss(output):
    # log-probabilities [10, 5]: NLL against fixed labels
    return F.nll_loss(output, torch.from_numpy(_graph()[2]))
