"""Hand-written port, paddle side: a SchNet-style molecular energy model (Schuett et al.) (written by "person A").

Inputs (positional): `atomic_numbers` int64 [2, 6] and `positions` float32 [2, 6, 3] (Angstrom):
a batch of two fixed 6-atom point clouds (numpy rng seed 197; every graph has its own atoms, no
padding). Output: per-graph energies [2, 1].

The model (dense all-pairs, cutoff r_c = 4.0; a few pairs of each cloud lie at 4.3 - 4.4,
beyond the cutoff):
  x      = Embedding(Z)                                        [B, N, 16]
  d_ij   = |r_i - r_j|                                         [B, N, N]
  e_ij   = exp(-0.5 / w^2 * (d_ij - mu_k)^2), mu = linspace(0, 4, 20), w = mu_1 - mu_0
  c_ij   = 0.5 * (cos(pi d_ij / r_c) + 1) * [d_ij < r_c]      (cosine cutoff)
  3 x interaction, x = x + v:
      W_ij = Dense(ssp(Dense(e_ij))) * c_ij * [i != j]          (filter network, F = 16)
      v    = Dense(ssp(Dense(sum_j W_ij * (x_j @ W_in))))      (continuous-filter convolution)
  E      = sum_i Dense(ssp(Dense(x_i)))                         (atom-wise 16 -> 8 -> 1, sum readout)
with the shifted softplus ssp(x) = softplus(x) - log 2.

Paddle idioms on this side (schnetpack-like):
- root `SchNetModel` registers `embedding` (Embedding(10, 16)), `rbf` (GaussianRBF), `cutoff_fn`
  (CosineCutoff), `interactions` (LayerList of 3 SchNetInteraction), `atomwise` (Sequential of
  Linear(16, 8), ShiftedSoftplus, Linear(8, 1)). The distances, the residual and the sum over
  atoms are inline in its forward; `rbf` and `cutoff_fn` are called ONCE per forward and their
  outputs handed to every interaction.
- `GaussianRBF` keeps the centres as a registered buffer `offsets` (paddle.linspace) and the
  coefficient as a Python float.
- `ShiftedSoftplus` is a Layer of its own (no parameters), written as log(0.5 * exp(x) + 0.5)
  (equal to softplus(x) - log 2); every ssp of the model is such a module.
- `SchNetInteraction`: `filter_net` = Sequential(Linear(20, 16), ShiftedSoftplus, Linear(16, 16)),
  `in2f` Linear(16, 16, bias_attr=False), `f2out` = Sequential(Linear(16, 16), ShiftedSoftplus,
  Linear(16, 16)); called as (x, f_ij, rcut_ij). The continuous-filter convolution (cutoff
  weighting, self-pair mask, neighbour sum) is inline in its forward.
- model() gives the embedding N(0, 1) rows and every Linear bias trained-looking N(0, 0.1)
  values (seeded), so that no bias is zero.

The torch side (port_schnet_torch.py) was written independently in the style of
torch_geometric's SchNet: RBF centres computed inline with torch.linspace, the cosine cutoff and
the self-pair mask inline in a `CFConv` module, the shifted softplus an inline function (no
module), torch.cdist for the distances.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_ssp_no_shift -> ShiftedSoftplus drops the shift: log(exp(x) + 1) (plain softplus),
                         so every ssp output is log 2 too large
  paddle_self_pairs   -> the interaction forgets to mask the i == j pairs (d_ii = 0, cutoff 1),
                         so every atom also convolves with itself
"""
import math
import os

import numpy as np
import paddle
from paddle import nn

N_TYPES, N_ATOM_BASIS, N_FILTERS, N_RBF, N_INTERACTIONS = 10, 16, 16, 20, 3
CUTOFF = 4.0
BATCH, N_ATOMS = 2, 6
OWN_BUGS = {"paddle_ssp_no_shift", "paddle_self_pairs"}
OTHER_BUGS = {"torch_cutoff_no_step", "torch_aggregate_self"}


class ShiftedSoftplus(nn.Layer):
    def __init__(self, shifted=True):
        super().__init__()
        self.shifted = shifted

    def forward(self, x):
        if self.shifted:
            return paddle.log(0.5 * paddle.exp(x) + 0.5)
        return paddle.log(paddle.exp(x) + 1.0)


class GaussianRBF(nn.Layer):
    def __init__(self, n_rbf, cutoff):
        super().__init__()
        offsets = paddle.linspace(0.0, cutoff, n_rbf, dtype="float32")
        self.register_buffer("offsets", offsets)
        width = cutoff / (n_rbf - 1)
        self.coeff = -0.5 / width**2

    def forward(self, d):
        return paddle.exp(self.coeff * (d.unsqueeze(-1) - self.offsets) ** 2)


class CosineCutoff(nn.Layer):
    def __init__(self, cutoff):
        super().__init__()
        self.cutoff = cutoff

    def forward(self, d):
        c = 0.5 * (paddle.cos(d * math.pi / self.cutoff) + 1.0)
        return c * (d < self.cutoff).astype(d.dtype)


class SchNetInteraction(nn.Layer):
    def __init__(self, n_atom_basis, n_filters, n_rbf, ssp_shifted=True, mask_self=True):
        super().__init__()
        self.mask_self = mask_self
        self.filter_net = nn.Sequential(nn.Linear(n_rbf, n_filters), ShiftedSoftplus(ssp_shifted),
                                        nn.Linear(n_filters, n_filters))
        self.in2f = nn.Linear(n_atom_basis, n_filters, bias_attr=False)
        self.f2out = nn.Sequential(nn.Linear(n_filters, n_atom_basis), ShiftedSoftplus(ssp_shifted),
                                   nn.Linear(n_atom_basis, n_atom_basis))

    def forward(self, x, f_ij, rcut_ij):
        w_ij = self.filter_net(f_ij) * rcut_ij.unsqueeze(-1)  # [B, N, N, F]
        if self.mask_self:
            n = x.shape[1]
            w_ij = w_ij * (1.0 - paddle.eye(n, dtype=x.dtype)).reshape([1, n, n, 1])
        h = self.in2f(x)  # [B, N, F]
        y = paddle.sum(w_ij * h.unsqueeze(1), axis=2)  # y_i = sum_j W_ij * h_j
        return self.f2out(y)


class SchNetModel(nn.Layer):
    def __init__(self, ssp_shifted=True, mask_self=True):
        super().__init__()
        self.embedding = nn.Embedding(N_TYPES, N_ATOM_BASIS)
        self.rbf = GaussianRBF(N_RBF, CUTOFF)
        self.cutoff_fn = CosineCutoff(CUTOFF)
        self.interactions = nn.LayerList([
            SchNetInteraction(N_ATOM_BASIS, N_FILTERS, N_RBF, ssp_shifted, mask_self) for _ in range(N_INTERACTIONS)
        ])
        self.atomwise = nn.Sequential(nn.Linear(N_ATOM_BASIS, N_ATOM_BASIS // 2), ShiftedSoftplus(ssp_shifted),
                                      nn.Linear(N_ATOM_BASIS // 2, 1))

    def forward(self, atomic_numbers, positions):
        x = self.embedding(atomic_numbers)
        r_ij = positions.unsqueeze(2) - positions.unsqueeze(1)  # [B, N, N, 3]
        d_ij = paddle.sqrt(paddle.sum(r_ij * r_ij, axis=-1))
        f_ij = self.rbf(d_ij)
        rcut_ij = self.cutoff_fn(d_ij)
        for interaction in self.interactions:
            x = x + interaction(x, f_ij, rcut_ij)
        return paddle.sum(self.atomwise(x), axis=1)  # [B, 1]


def _trained_look(m):
    rng = np.random.default_rng(197)
    m.embedding.weight.set_value(rng.normal(0.0, 1.0, (N_TYPES, N_ATOM_BASIS)).astype("float32"))
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.Linear) and layer.bias is not None:
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_schnet paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = SchNetModel(ssp_shifted=bug != "paddle_ssp_no_shift", mask_self=bug != "paddle_self_pairs")
    _trained_look(m)
    m.eval()
    return m


def _molecules():
    rng = np.random.default_rng(197)
    positions = rng.uniform(0.0, 3.6, (BATCH, N_ATOMS, 3)).astype("float32")
    atomic_numbers = np.array([[6, 1, 8, 1, 7, 6], [8, 6, 1, 1, 6, 7]], dtype="int64")
    return atomic_numbers, positions


def inputs():
    z, pos = _molecules()
    return (paddle.to_tensor(z), paddle.to_tensor(pos)), {}


def loss(output):
    # energies [2, 1]
    return (output**2).mean()
