"""Hand-written port, torch side: a tiny two-layer GATv2 node classifier (written by "person B").

The same math as port_gatv2_paddle.py, re-implemented by hand in a PyG-like style: node features
`x` [10, 12] (positional), a fixed directed graph of 10 nodes (21 edges + 10 self loops), layer 1
GATv2 12 -> 4 heads x 8 concatenated (32) + ELU, layer 2 GATv2 32 -> 2 heads x 5 averaged:
output [10, 5]. For an edge j -> i: e_ij = att . LeakyReLU_0.2(x_src[j] + x_dst[i]), softmax over
the incoming edges of i, out_i = sum_j alpha_ij x_src[j], + bias. Eval mode (dropout off).

Torch idioms on this side (sparse, PyG-ish):
- root `GATv2Model` registers `dropout` (nn.Dropout(0.6), identity in eval), `convs` =
  nn.ModuleList of two `GATv2Conv`, `act` = nn.ELU(), then the non-persistent int64 buffer
  `edge_index` [2, 31] (row 0 = source, row 1 = target; the self loops appended at the end,
  like add_self_loops). Forward: dropout -> convs[0](x, edge_index) -> act -> dropout ->
  convs[1](x, edge_index).
- `GATv2Conv` registers `lin` = ONE fused nn.Linear(in, 2 * H * C) whose output is chunked into
  [x_src | x_dst] (both layers; there is no share_weights option on this side), then `leaky`
  = nn.LeakyReLU(0.2), then the parameters `att` [1, H, C] and `bias`.
- Messages are gathered per edge (x_src[src] + x_dst[dst], [E, H, C]); the softmax is a scatter
  softmax over the target index (scatter_reduce amax, exp, index_add); aggregation by index_add.
  The result is flattened to [N, H * C]; the last layer views it back to [N, H, C] and averages
  the heads.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_gatv1_order      -> the attention vector is applied BEFORE the LeakyReLU (the original
                            GAT order: leaky(att . (x_src[j] + x_dst[i])) instead of
                            att . leaky(x_src[j] + x_dst[i]))
  torch_head_mean_layout -> the head mean of the last layer views the flat [N, H * C] output as
                            [N, C, H] (and averages the last axis) instead of [N, H, C]
"""
import os

import numpy as np
import torch
from torch import nn

N_NODES, N_FEATURES, N_CLASSES = 10, 12, 5
HIDDEN_CHANNELS, HEADS, OUT_HEADS = 8, 4, 2
NEGATIVE_SLOPE, DROPOUT = 0.2, 0.6
# adjacency list: node -> the nodes it sends a message to
OUT_NEIGHBOURS = {
    0: [1, 5], 1: [2, 8], 2: [3, 1], 3: [4, 7], 4: [5, 9],
    5: [6, 4, 0], 6: [7, 1], 7: [8, 6], 8: [9, 2], 9: [0, 4],
}
OWN_BUGS = {"torch_gatv1_order", "torch_head_mean_layout"}
OTHER_BUGS = {"paddle_softmax_axis0", "paddle_leaky_default"}


def build_edge_index():
    src = [s for s, dsts in OUT_NEIGHBOURS.items() for _ in dsts]
    dst = [d for dsts in OUT_NEIGHBOURS.values() for d in dsts]
    loops = list(range(N_NODES))
    return torch.tensor([src + loops, dst + loops], dtype=torch.long)


class GATv2Conv(nn.Module):
    def __init__(self, in_channels, out_channels, heads, concat=True, gatv1_order=False,
                 mean_layout_bug=False):
        super().__init__()
        self.heads, self.out_channels, self.concat = heads, out_channels, concat
        self.gatv1_order, self.mean_layout_bug = gatv1_order, mean_layout_bug
        self.lin = nn.Linear(in_channels, 2 * heads * out_channels)
        self.leaky = nn.LeakyReLU(NEGATIVE_SLOPE)
        self.att = nn.Parameter(torch.empty(1, heads, out_channels))
        self.bias = nn.Parameter(torch.zeros(heads * out_channels if concat else out_channels))
        nn.init.xavier_uniform_(self.att)

    def forward(self, x, edge_index):
        n, h, c = x.size(0), self.heads, self.out_channels
        x_src, x_dst = self.lin(x).chunk(2, dim=-1)
        x_src, x_dst = x_src.view(n, h, c), x_dst.view(n, h, c)
        src, dst = edge_index[0], edge_index[1]
        x_j = x_src[src]  # [E, H, C]
        m = x_j + x_dst[dst]
        if self.gatv1_order:
            score = self.leaky((m * self.att).sum(dim=-1))
        else:
            score = (self.leaky(m) * self.att).sum(dim=-1)  # [E, H]
        # scatter softmax over the incoming edges of each target
        idx = dst.unsqueeze(-1).expand(-1, h)
        smax = score.new_full((n, h), float("-inf")).scatter_reduce(0, idx, score, reduce="amax")
        ex = (score - smax[dst]).exp()
        denom = score.new_zeros(n, h).index_add(0, dst, ex)
        alpha = ex / denom[dst]
        out = x.new_zeros(n, h, c).index_add(0, dst, x_j * alpha.unsqueeze(-1))
        out = out.reshape(n, h * c)
        if not self.concat:
            if self.mean_layout_bug:
                out = out.view(n, c, h).mean(dim=-1)
            else:
                out = out.view(n, h, c).mean(dim=1)
        return out + self.bias


class GATv2Model(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        gatv1 = kw.get("gatv1_order", False)
        self.dropout = nn.Dropout(DROPOUT)
        self.convs = nn.ModuleList([
            GATv2Conv(N_FEATURES, HIDDEN_CHANNELS, HEADS, concat=True, gatv1_order=gatv1),
            GATv2Conv(HIDDEN_CHANNELS * HEADS, N_CLASSES, OUT_HEADS, concat=False, gatv1_order=gatv1,
                      mean_layout_bug=kw.get("mean_layout_bug", False)),
        ])
        self.act = nn.ELU()
        self.register_buffer("edge_index", build_edge_index(), persistent=False)

    def forward(self, x):
        x = self.dropout(x)
        x = self.act(self.convs[0](x, self.edge_index))
        x = self.dropout(x)
        return self.convs[1](x, self.edge_index)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_gatv2 torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = GATv2Model(gatv1_order=bug == "torch_gatv1_order", mean_layout_bug=bug == "torch_head_mean_layout")
    return m.eval()


def _features():
    rng = np.random.default_rng(53)
    return rng.standard_normal((N_NODES, N_FEATURES)).astype("float32")


def inputs():
    return (torch.from_numpy(_features()),), {}


def loss(output):
    # node class scores [10, 5]
    return (output**2).mean()
