"""Hand-written port, torch side: a tiny Deep & Cross Network v2 for CTR data (written by "person B").

The same math as port_dcnv2_paddle.py, re-implemented by hand in a torchrec / DeepCTR-like style:
inputs `dense` [16, 6] float32 and `sparse_ids` [16, 4] int64 (positional, numpy rng seed 31),
output one click logit per row [16, 1].

  x0      = concat(dense, emb_0, emb_1, emb_2, emb_3)       -> d = 6 + 16 = 22 (DENSE FIRST)
  cross   x_{l+1} = x0 * W_l(x_l) + x_l, three nn.Linear(22, 22) (bias inside the Linear)
  deep    MLP 22 -> 32 -> 16 (Linear, BatchNorm1d, ReLU per layer)
  logit   Linear(38, 1) over concat(cross_out, deep_out)

Torch idioms on this side:
- root `DeepCrossNetworkV2` registers `embedding_tables` (nn.ModuleList, one nn.Embedding per
  field, each called once), then `deep` (an `MLP` whose `layers` nn.Sequential is built in a loop),
  then `cross` (a `CrossNetwork` holding `cross_layers`, an nn.ModuleList of nn.Linear, one call
  each), then `output_layer` nn.Linear(38, 1).
- The dense features come FIRST in x0, so every tensor on the 22-wide feature axis (cross
  weights, cross biases, the first deep Linear's inputs, the first 22 inputs of the output layer)
  is the paddle one with its feature axis reordered (paddle index 16 + j <-> torch index j for the
  dense features, paddle index k <-> torch index 6 + k for the embeddings).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_cross_residual_x0 -> the cross loop adds x0 as the residual instead of x_l:
                             x_{l+1} = x0 * W_l(x_l) + x0 (identical for layer 0)
  torch_mlp_last_no_relu  -> the MLP builder skips the activation after the last hidden layer
                             (`if i < len(dims) - 2`), as for an output MLP
"""
import os

import numpy as np
import torch
from torch import nn

FIELD_CARDINALITIES = [10, 7, 13, 5]
EMBEDDING_DIM, NUM_DENSE, NUM_CROSS_LAYERS = 4, 6, 3
HIDDEN_UNITS = [32, 16]
BATCH = 16
INPUT_DIM = NUM_DENSE + EMBEDDING_DIM * len(FIELD_CARDINALITIES)
OWN_BUGS = {"torch_cross_residual_x0", "torch_mlp_last_no_relu"}
OTHER_BUGS = {"paddle_cross_uses_xl", "paddle_bn_eps"}


class MLP(nn.Module):
    def __init__(self, dims, last_no_relu=False):
        super().__init__()
        mods = []
        for i in range(len(dims) - 1):
            mods.append(nn.Linear(dims[i], dims[i + 1]))
            mods.append(nn.BatchNorm1d(dims[i + 1]))
            if not last_no_relu or i < len(dims) - 2:
                mods.append(nn.ReLU())
        self.layers = nn.Sequential(*mods)

    def forward(self, x):
        return self.layers(x)


class CrossNetwork(nn.Module):
    def __init__(self, input_dim, num_layers, residual_x0=False):
        super().__init__()
        self.residual_x0 = residual_x0
        self.cross_layers = nn.ModuleList([nn.Linear(input_dim, input_dim) for _ in range(num_layers)])

    def forward(self, x0):
        xl = x0
        for layer in self.cross_layers:
            if self.residual_x0:
                xl = x0 * layer(xl) + x0
            else:
                xl = x0 * layer(xl) + xl
        return xl


class DeepCrossNetworkV2(nn.Module):
    def __init__(self, residual_x0=False, last_no_relu=False):
        super().__init__()
        self.embedding_tables = nn.ModuleList([nn.Embedding(n, EMBEDDING_DIM) for n in FIELD_CARDINALITIES])
        self.deep = MLP([INPUT_DIM, *HIDDEN_UNITS], last_no_relu=last_no_relu)
        self.cross = CrossNetwork(INPUT_DIM, NUM_CROSS_LAYERS, residual_x0=residual_x0)
        self.output_layer = nn.Linear(INPUT_DIM + HIDDEN_UNITS[-1], 1)

    def forward(self, dense, sparse_ids):
        embs = [table(sparse_ids[:, i]) for i, table in enumerate(self.embedding_tables)]
        x0 = torch.cat([dense, *embs], dim=1)  # dense | sparse
        return self.output_layer(torch.cat([self.cross(x0), self.deep(x0)], dim=1))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_dcnv2 torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = DeepCrossNetworkV2(residual_x0=bug == "torch_cross_residual_x0",
                           last_no_relu=bug == "torch_mlp_last_no_relu")
    return m.eval()


def _data():
    rng = np.random.default_rng(31)
    dense = np.log1p(rng.lognormal(0.0, 1.0, (BATCH, NUM_DENSE))).astype("float32")
    ids = np.stack([rng.integers(0, v, BATCH) for v in FIELD_CARDINALITIES], axis=1).astype("int64")
    return dense, ids


def inputs():
    dense, ids = _data()
    return (torch.from_numpy(dense), torch.from_numpy(ids)), {}


def loss(output):
    # click logits [16, 1]
    return (output**2).mean()
