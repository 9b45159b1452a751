"""Hand-written port, torch side: a SchNet-style molecular energy model (Schuett et al.) (written by "person B").

The same math as port_schnet_paddle.py, re-implemented by hand in the style of
torch_geometric.nn.models.SchNet, but on a dense all-pairs batch: inputs `z` int64 [2, 6] and
`pos` float32 [2, 6, 3] (positional), hidden 16, 16 filters, 20 Gaussians on [0, 4], cosine
cutoff 4.0, 3 interaction blocks with residuals, an atom-wise 16 -> 8 -> 1 MLP and a sum over
the atoms of each graph: energies [2, 1].

Torch idioms on this side:
- root `SchNet` registers `embedding` (nn.Embedding(10, 16)), `interactions` (ModuleList of 3
  InteractionBlock), `lin1` Linear(16, 8), `lin2` Linear(8, 1). The distances (torch.cdist), the
  Gaussian smearing (centres from torch.linspace inside the forward: NO buffer), the residual, the
  read-out shifted softplus and the sum over atoms are inline in its forward.
- `shifted_softplus(x) = F.softplus(x) - log 2` is a plain function (no module).
- `InteractionBlock` registers `conv` (CFConv) then `lin` Linear(16, 16); forward(h, dist,
  edge_attr): conv -> shifted_softplus -> lin.
- `CFConv` registers `lin1` Linear(16, 16, bias=False), `lin2` Linear(16, 16) and `filter_net`
  (FilterNetwork), and calls filter_net first: C = 0.5 * (cos(pi d / r_c) + 1) * (d < r_c),
  times the off-diagonal mask (both computed inline, in every block), W = filter_net(edge_attr)
  * C, then lin1, the neighbour sum einsum("bijf,bjf->bif") and lin2.
- `FilterNetwork`: `dense1` Linear(20, 16), `dense2` Linear(16, 16), shifted softplus inline.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_cutoff_no_step  -> CFConv's cosine cutoff forgets the (d < r_c) step, so the pairs just
                           beyond r_c (4.3 - 4.4) keep a small weight 0.5 * (cos(pi d / r_c) + 1)
                           (0.014 - 0.028) instead of 0
  torch_aggregate_self  -> the neighbour sum uses the receiving atom's features,
                           einsum("bijf,bif->bif") (x_i instead of x_j)
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

NUM_EMBEDDINGS, HIDDEN_CHANNELS, NUM_FILTERS, NUM_GAUSSIANS, NUM_INTERACTIONS = 10, 16, 16, 20, 3
CUTOFF = 4.0
BATCH, N_ATOMS = 2, 6
OWN_BUGS = {"torch_cutoff_no_step", "torch_aggregate_self"}
OTHER_BUGS = {"paddle_ssp_no_shift", "paddle_self_pairs"}


def shifted_softplus(x):
    return F.softplus(x) - math.log(2.0)


class FilterNetwork(nn.Module):
    def __init__(self, num_gaussians, num_filters):
        super().__init__()
        self.dense1 = nn.Linear(num_gaussians, num_filters)
        self.dense2 = nn.Linear(num_filters, num_filters)

    def forward(self, edge_attr):
        return self.dense2(shifted_softplus(self.dense1(edge_attr)))


class CFConv(nn.Module):
    def __init__(self, in_channels, out_channels, num_filters, num_gaussians, cutoff, cutoff_step=True,
                 aggregate_self=False):
        super().__init__()
        self.lin1 = nn.Linear(in_channels, num_filters, bias=False)
        self.lin2 = nn.Linear(num_filters, out_channels)
        self.filter_net = FilterNetwork(num_gaussians, num_filters)
        self.cutoff = cutoff
        self.cutoff_step = cutoff_step
        self.aggregate_self = aggregate_self

    def forward(self, x, dist, edge_attr):
        n = x.size(1)
        C = 0.5 * (torch.cos(dist * math.pi / self.cutoff) + 1.0)
        if self.cutoff_step:
            C = C * (dist < self.cutoff).to(dist.dtype)
        C = C * (1.0 - torch.eye(n, dtype=dist.dtype, device=dist.device))  # no self loops
        W = self.filter_net(edge_attr) * C.unsqueeze(-1)  # [B, N, N, F]
        x = self.lin1(x)
        if self.aggregate_self:
            x = torch.einsum("bijf,bif->bif", W, x)
        else:
            x = torch.einsum("bijf,bjf->bif", W, x)
        return self.lin2(x)


class InteractionBlock(nn.Module):
    def __init__(self, hidden_channels, num_gaussians, num_filters, cutoff, **conv_kw):
        super().__init__()
        self.conv = CFConv(hidden_channels, hidden_channels, num_filters, num_gaussians, cutoff, **conv_kw)
        self.lin = nn.Linear(hidden_channels, hidden_channels)

    def forward(self, h, dist, edge_attr):
        h = self.conv(h, dist, edge_attr)
        h = shifted_softplus(h)
        return self.lin(h)


class SchNet(nn.Module):
    def __init__(self, **conv_kw):
        super().__init__()
        self.cutoff = CUTOFF
        self.num_gaussians = NUM_GAUSSIANS
        self.embedding = nn.Embedding(NUM_EMBEDDINGS, HIDDEN_CHANNELS)
        self.interactions = nn.ModuleList([
            InteractionBlock(HIDDEN_CHANNELS, NUM_GAUSSIANS, NUM_FILTERS, CUTOFF, **conv_kw)
            for _ in range(NUM_INTERACTIONS)
        ])
        self.lin1 = nn.Linear(HIDDEN_CHANNELS, HIDDEN_CHANNELS // 2)
        self.lin2 = nn.Linear(HIDDEN_CHANNELS // 2, 1)

    def forward(self, z, pos):
        h = self.embedding(z)
        dist = torch.cdist(pos, pos)  # [B, N, N]
        offset = torch.linspace(0.0, self.cutoff, self.num_gaussians, dtype=pos.dtype, device=pos.device)
        coeff = -0.5 / (offset[1] - offset[0]).item() ** 2
        edge_attr = torch.exp(coeff * torch.pow(dist.unsqueeze(-1) - offset, 2))
        for interaction in self.interactions:
            h = h + interaction(h, dist, edge_attr)
        h = self.lin1(h)
        h = shifted_softplus(h)
        h = self.lin2(h)
        return h.sum(dim=1)  # [B, 1]


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_schnet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = SchNet(cutoff_step=bug != "torch_cutoff_no_step", aggregate_self=bug == "torch_aggregate_self")
    return m.eval()


def _molecules():
    rng = np.random.default_rng(197)
    positions = rng.uniform(0.0, 3.6, (BATCH, N_ATOMS, 3)).astype("float32")
    atomic_numbers = np.array([[6, 1, 8, 1, 7, 6], [8, 6, 1, 1, 6, 7]], dtype="int64")
    return atomic_numbers, positions


def inputs():
    z, pos = _molecules()
    return (torch.from_numpy(z), torch.from_numpy(pos)), {}


def loss(output):
    # energies [2, 1]
    return (output**2).mean()
