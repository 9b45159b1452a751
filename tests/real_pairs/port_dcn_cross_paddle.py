"""Hand-written port, paddle side: a DCN-v2 recommender (Deep & Cross Network v2, parallel
structure, low-rank mixture-of-experts cross layers) (written by "person A").

Inputs (positional): `sparse_ids` [6, 4] int64 (one id per categorical field, vocabularies
11 / 7 / 13 / 5) and `dense` [6, 8] float32 (numpy rng seed 39). Output: the click logit [6, 1].

The model:
  x0      = concat(embedding of each field (dim 6, 4 fields -> 24), dense (8))   -> [B, 32]
  cross   : 3 low-rank mixture cross layers (3 experts of rank 8 each):
            E_i(x_l) = x0 * (U_i tanh(C_i tanh(V_i^T x_l)) + b_l)
            G(x_l)   = softmax over the experts of the gate scores (one bias-free score per expert)
            x_{l+1}  = sum_i G_i(x_l) E_i(x_l) + x_l
  deep    : Linear(32, 48) -> BN -> ReLU -> Linear(48, 24) -> BN -> ReLU   (on x0, in parallel)
  logit   = Linear(concat(x_L, deep) [B, 56] -> 1)

Paddle idioms on this side:
- root `DeepCrossNetV2` registers `deep` first (an nn.Sequential: Linear, BatchNorm1D, ReLU,
  Linear, BatchNorm1D, ReLU), then `cross_layers` (LayerList, iterated in the root forward with
  (x0, x_l)), then ONE `embedding` table nn.Embedding(36, 6) for all fields with a
  `field_offsets` buffer [4] (0, 11, 18, 31) added to the ids inline, then `logit`
  nn.Linear(56, 1) on the concatenation.
- `MixtureCrossLayer`: `gate` = ONE nn.Linear(32, 3, bias_attr=False) (all experts' gate scores
  at once), then the experts STACKED in three create_parameter tensors: `U` [3, 32, 8],
  `V` [3, 32, 8], `C` [3, 8, 8], and the layer bias `bias` [32]. The experts are computed with
  paddle.einsum over the stacked tensors, tanh inline (F.tanh), softmax inline.
- model() gives the BN layers trained-looking affine weights / running statistics and the cross
  biases, the Linear biases and the embedding trained-looking values (seeded).

The torch side (port_dcn_cross_torch.py) was written independently: one embedding table per
field, a `CrossNetV2` wrapper with a ModuleList of layers, each with a ModuleList of expert
modules (three bias-free Linears each) and a ModuleList of one-output gate Linears, an MLP of
blocks, and the logit as the sum of two heads.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_gate_softmax_axis -> MixtureCrossLayer normalises the gate scores with
                              F.softmax(axis=0) (over the batch) instead of over the experts
  paddle_bn_eps_keras      -> the deep tower's BatchNorm1D layers are built with epsilon=1e-3
                              (the Keras default) instead of 1e-5 (precision-level)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCABS = (11, 7, 13, 5)
EMB_DIM, N_DENSE = 6, 8
IN_DIM = EMB_DIM * len(VOCABS) + N_DENSE  # 32
N_EXPERTS, RANK, N_CROSS = 3, 8, 3
DEEP = (48, 24)
BATCH = 6
OWN_BUGS = {"paddle_gate_softmax_axis", "paddle_bn_eps_keras"}
OTHER_BUGS = {"torch_residual_x0", "torch_expert_single_tanh"}


class MixtureCrossLayer(nn.Layer):
    def __init__(self, dim, num_experts, rank, gate_axis=-1):
        super().__init__()
        self.gate_axis = gate_axis
        self.gate = nn.Linear(dim, num_experts, bias_attr=False)
        normal = nn.initializer.Normal(0.0, 0.2)
        self.U = self.create_parameter([num_experts, dim, rank], default_initializer=normal)
        self.V = self.create_parameter([num_experts, dim, rank], default_initializer=normal)
        self.C = self.create_parameter([num_experts, rank, rank], default_initializer=normal)
        self.bias = self.create_parameter([dim], is_bias=True)

    def forward(self, x0, xl):
        h = F.tanh(paddle.einsum("bd,edr->ber", xl, self.V))  # V^T x_l   [B, E, r]
        h = F.tanh(paddle.einsum("ber,esr->bes", h, self.C))  # C h       [B, E, r]
        u = paddle.einsum("ber,edr->bed", h, self.U)  # U h       [B, E, d]
        experts = x0.unsqueeze(1) * (u + self.bias)  # [B, E, d]
        g = F.softmax(self.gate(xl), axis=self.gate_axis)  # [B, E]
        return (g.unsqueeze(-1) * experts).sum(axis=1) + xl


class DeepCrossNetV2(nn.Layer):
    def __init__(self, gate_axis=-1, bn_eps=1e-5):
        super().__init__()
        self.deep = nn.Sequential(
            nn.Linear(IN_DIM, DEEP[0]),
            nn.BatchNorm1D(DEEP[0], epsilon=bn_eps),
            nn.ReLU(),
            nn.Linear(DEEP[0], DEEP[1]),
            nn.BatchNorm1D(DEEP[1], epsilon=bn_eps),
            nn.ReLU(),
        )
        self.cross_layers = nn.LayerList(
            [MixtureCrossLayer(IN_DIM, N_EXPERTS, RANK, gate_axis) for _ in range(N_CROSS)])
        self.embedding = nn.Embedding(sum(VOCABS), EMB_DIM)
        offsets = np.concatenate([[0], np.cumsum(VOCABS)[:-1]]).astype("int64")
        self.register_buffer("field_offsets", paddle.to_tensor(offsets))
        self.logit = nn.Linear(IN_DIM + DEEP[1], 1)

    def forward(self, sparse_ids, dense):
        emb = self.embedding(sparse_ids + self.field_offsets)  # [B, 4, 6]
        x0 = paddle.concat([emb.reshape([emb.shape[0], -1]), dense], axis=1)  # [B, 32]
        xl = x0
        for layer in self.cross_layers:
            xl = layer(x0, xl)
        deep = self.deep(x0)
        return self.logit(paddle.concat([xl, deep], axis=1))


def _trained_look(m):
    rng = np.random.default_rng(39)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm1D):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.3, n).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, n).astype("float32"))
        elif isinstance(layer, nn.Linear) and layer.bias is not None:
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))
        elif isinstance(layer, MixtureCrossLayer):
            layer.bias.set_value(rng.normal(0.0, 0.2, layer.bias.shape).astype("float32"))
            layer.gate.weight.set_value(rng.normal(0.0, 0.5, layer.gate.weight.shape).astype("float32"))
        elif isinstance(layer, nn.Embedding):
            layer.weight.set_value(rng.normal(0.0, 0.5, layer.weight.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_dcn_cross paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = DeepCrossNetV2(gate_axis=0 if bug == "paddle_gate_softmax_axis" else -1,
                       bn_eps=1e-3 if bug == "paddle_bn_eps_keras" else 1e-5)
    _trained_look(m)
    m.eval()
    return m


def _data():
    rng = np.random.default_rng(39)
    ids = np.stack([rng.integers(0, v, BATCH) for v in VOCABS], axis=1).astype("int64")
    dense = rng.standard_normal((BATCH, N_DENSE)).astype("float32")
    return ids, dense


def inputs():
    ids, dense = _data()
    return (paddle.to_tensor(ids), paddle.to_tensor(dense)), {}


def loss(output):
    # click logits [6, 1]
    return (output**2).mean()
