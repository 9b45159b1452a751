"""Hand-written port, torch side: an E(n)-equivariant graph neural network, EGNN (written by
"person B", dense batched style).

The same math as port_egnn_paddle.py, re-implemented on dense pairwise tensors: inputs h
[2, 6, 5], x [2, 6, 3], edge_attr [2, 6, 6, 2] (positional; entry [b, i, j] belongs to the edge
j -> i), fully connected graphs without self edges, width 16, two layers; output concat(h_out
[.., 4], x_out [.., 3]) = [2, 6, 7].

  m_ij = silu(W2 silu(P_i h_i + P_j h_j + P_e [d_ij, a_ij] + b) + b2),  d_ij = |x_i - x_j|^2
  x_i' = x_i + sum_j mask_ij (x_i - x_j) phi(m_ij) / sum_j mask_ij
  h_i' = h_i + net(cat(h_i, sum_j mask_ij m_ij))

Torch idioms on this side:
- root `DenseEGNN`: `node_in`, `blocks` (nn.ModuleList of `DenseEGCL`), `node_out`; the
  off-diagonal mask [B, N, N, 1] is built in the forward from torch.eye and passed to every block.
- `DenseEGCL` registers `messages`, `node_update`, `coord_update` (called messages ->
  coord_update -> node_update); d_ij comes from torch.cdist(x, x) ** 2 in the block's forward.
- `EdgeMessage`: the first edge Linear is SPLIT into `proj_i` (receiver, with the bias),
  `proj_j` (sender, no bias) and `proj_edge` (d_ij and a_ij, no bias), broadcast to [B, N, N, 16]
  (the per-node projections avoid the N^2 concat), F.silu inline, then `mlp_out` =
  nn.Sequential(Linear, SiLU). m_ii is computed too and masked later.
- `CoordUpdate`: `phi` = nn.Sequential(Linear, SiLU, Linear(16, 1, bias=False)); it builds the
  pairwise differences x_i - x_j itself and averages over the masked neighbours.
- `NodeUpdate`: `net` = nn.Sequential(Linear(32, 16), SiLU, Linear(16, 16)), masked sum over j.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_coord_mean_all   -> CoordUpdate averages with .mean(dim=2) over all N = 6 slots (the
                            masked self slot included) instead of the 5 real neighbours: every
                            coordinate update is scaled by 5/6
  torch_proj_j_broadcast -> EdgeMessage unsqueezes the sender projection on the wrong axis
                            (proj_j(h)[:, :, None] instead of [:, None]), so m_ij sees h_i twice
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

NODE_IN, WIDTH, EDGE_IN, NODE_OUT, N_BLOCKS = 5, 16, 2, 4, 2
BATCH, N_NODES = 2, 6
OWN_BUGS = {"torch_coord_mean_all", "torch_proj_j_broadcast"}
OTHER_BUGS = {"paddle_agg_by_col", "paddle_coord_tanh"}


class EdgeMessage(nn.Module):
    def __init__(self, width, edge_in, wrong_axis=False):
        super().__init__()
        self.wrong_axis = wrong_axis
        self.proj_i = nn.Linear(width, width)
        self.proj_j = nn.Linear(width, width, bias=False)
        self.proj_edge = nn.Linear(1 + edge_in, width, bias=False)
        self.mlp_out = nn.Sequential(nn.Linear(width, width), nn.SiLU())

    def forward(self, h, dist2, edge_attr):
        hi = self.proj_i(h)[:, :, None]  # receiver i: [B, N, 1, W]
        if self.wrong_axis:
            hj = self.proj_j(h)[:, :, None]
        else:
            hj = self.proj_j(h)[:, None]  # sender j: [B, 1, N, W]
        pre = hi + hj + self.proj_edge(torch.cat([dist2, edge_attr], dim=-1))
        return self.mlp_out(F.silu(pre))


class CoordUpdate(nn.Module):
    def __init__(self, width, mean_all=False):
        super().__init__()
        self.mean_all = mean_all
        self.phi = nn.Sequential(nn.Linear(width, width), nn.SiLU(), nn.Linear(width, 1, bias=False))

    def forward(self, x, m, mask):
        rel = x[:, :, None, :] - x[:, None, :, :]  # [B, N, N, 3], x_i - x_j
        w = self.phi(m) * mask
        if self.mean_all:
            return x + (rel * w).mean(dim=2)
        return x + (rel * w).sum(dim=2) / mask.sum(dim=2)


class NodeUpdate(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2 * width, width), nn.SiLU(), nn.Linear(width, width))

    def forward(self, h, m, mask):
        agg = (m * mask).sum(dim=2)
        return h + self.net(torch.cat([h, agg], dim=-1))


class DenseEGCL(nn.Module):
    def __init__(self, width, edge_in, mean_all=False, wrong_axis=False):
        super().__init__()
        self.messages = EdgeMessage(width, edge_in, wrong_axis)
        self.node_update = NodeUpdate(width)
        self.coord_update = CoordUpdate(width, mean_all)

    def forward(self, h, x, edge_attr, mask):
        dist2 = torch.cdist(x, x).pow(2).unsqueeze(-1)
        m = self.messages(h, dist2, edge_attr)
        x_new = self.coord_update(x, m, mask)
        h_new = self.node_update(h, m, mask)
        return h_new, x_new


class DenseEGNN(nn.Module):
    def __init__(self, mean_all=False, wrong_axis=False):
        super().__init__()
        self.node_in = nn.Linear(NODE_IN, WIDTH)
        self.blocks = nn.ModuleList([DenseEGCL(WIDTH, EDGE_IN, mean_all, wrong_axis) for _ in range(N_BLOCKS)])
        self.node_out = nn.Linear(WIDTH, NODE_OUT)

    def forward(self, h, x, edge_attr):
        b, n = h.shape[:2]
        mask = (1.0 - torch.eye(n, dtype=x.dtype))[None, :, :, None].expand(b, n, n, 1)
        h = self.node_in(h)
        for blk in self.blocks:
            h, x = blk(h, x, edge_attr, mask)
        return torch.cat([self.node_out(h), x], dim=-1)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_egnn torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = DenseEGNN(mean_all=bug == "torch_coord_mean_all", wrong_axis=bug == "torch_proj_j_broadcast")
    return m.eval()


def _graphs():
    rng = np.random.default_rng(41)
    h = rng.standard_normal((BATCH, N_NODES, NODE_IN)).astype("float32")
    x = (0.8 * rng.standard_normal((BATCH, N_NODES, 3))).astype("float32")
    ea = rng.uniform(0.0, 1.0, (BATCH, N_NODES, N_NODES, EDGE_IN)).astype("float32")
    return h, x, ea


def inputs():
    return tuple(torch.from_numpy(a) for a in _graphs()), {}


def loss(output):
    # [2, 6, 7]: node outputs (4) and updated coordinates (3)
    return (output**2).mean()
