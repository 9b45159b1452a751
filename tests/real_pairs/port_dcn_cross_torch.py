"""Hand-written port, torch side: a DCN-v2 recommender (parallel structure, low-rank
mixture-of-experts cross network) (written by "person B").

The same math as port_dcn_cross_paddle.py, re-implemented by hand in the style of the
DeepCTR-Torch / torchrec code: positional `sparse_ids` [6, 4] int64 (vocabularies 11 / 7 / 13 / 5)
and `dense` [6, 8] float32; x0 = concat(4 field embeddings of dim 6, dense) [6, 32]; a cross
network of 3 low-rank mixture layers (3 experts of rank 8, tanh) and a deep MLP 32 -> 48 -> 24
(Linear, BN, ReLU) in parallel on x0; output: the click logit [6, 1].

Torch idioms on this side:
- root `DCNV2` registers `embedding_tables` (ModuleList, ONE nn.Embedding PER FIELD, each called
  on its own id column), `crossnet` (a `CrossNetV2` wrapper, called once with x0, that loops over
  its `layers`), `mlp` (ModuleList of `DNNBlock`: `fc`, `bn` with F.relu inline) and the logit
  as the SUM OF TWO HEADS: `cross_head` Linear(32, 1) (with the bias) + `deep_head`
  Linear(24, 1, bias=False).
- `CrossLayerMoE`: `experts` = ModuleList of `LowRankExpert` modules, each with its own `v`
  Linear(32, 8), `c` Linear(8, 8), `u` Linear(8, 32) (all bias-free) and `act` nn.Tanh (called
  twice); `gating` = ModuleList of one-output Linear(32, 1, bias=False), one per expert; `bias`
  nn.Parameter [32]. The expert outputs are stacked to [B, 32, E] and mixed with
  torch.bmm against the softmaxed gates [B, E, 1].

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_residual_x0         -> CrossLayerMoE adds x0 instead of x_l as the residual (identical
                               in the first layer, where x_l = x0)
  torch_expert_single_tanh  -> LowRankExpert applies tanh only after c (u(tanh(c(v(x))))),
                               forgetting the one after v
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

FIELD_DIMS = (11, 7, 13, 5)
EMBED_DIM, DENSE_DIM = 6, 8
INPUT_DIM = EMBED_DIM * len(FIELD_DIMS) + DENSE_DIM
NUM_EXPERTS, LOW_RANK, LAYER_NUM = 3, 8, 3
HIDDEN_UNITS = (48, 24)
BATCH = 6
OWN_BUGS = {"torch_residual_x0", "torch_expert_single_tanh"}
OTHER_BUGS = {"paddle_gate_softmax_axis", "paddle_bn_eps_keras"}


class LowRankExpert(nn.Module):
    def __init__(self, in_features, low_rank, single_tanh=False):
        super().__init__()
        self.single_tanh = single_tanh
        self.v = nn.Linear(in_features, low_rank, bias=False)
        self.c = nn.Linear(low_rank, low_rank, bias=False)
        self.u = nn.Linear(low_rank, in_features, bias=False)
        self.act = nn.Tanh()

    def forward(self, x):
        if self.single_tanh:
            return self.u(self.act(self.c(self.v(x))))
        return self.u(self.act(self.c(self.act(self.v(x)))))


class CrossLayerMoE(nn.Module):
    def __init__(self, in_features, num_experts, low_rank, residual_x0=False, single_tanh=False):
        super().__init__()
        self.residual_x0 = residual_x0
        self.experts = nn.ModuleList(
            [LowRankExpert(in_features, low_rank, single_tanh) for _ in range(num_experts)])
        self.gating = nn.ModuleList([nn.Linear(in_features, 1, bias=False) for _ in range(num_experts)])
        self.bias = nn.Parameter(torch.zeros(in_features))

    def forward(self, x0, xl):
        outs, scores = [], []
        for expert, gate in zip(self.experts, self.gating):
            outs.append(x0 * (expert(xl) + self.bias))  # [B, d]
            scores.append(gate(xl))  # [B, 1]
        outs = torch.stack(outs, dim=2)  # [B, d, E]
        gates = torch.softmax(torch.cat(scores, dim=1), dim=1)  # [B, E]
        mixed = torch.bmm(outs, gates.unsqueeze(2)).squeeze(2)
        return mixed + (x0 if self.residual_x0 else xl)


class CrossNetV2(nn.Module):
    def __init__(self, in_features, layer_num, num_experts, low_rank, residual_x0=False, single_tanh=False):
        super().__init__()
        self.layers = nn.ModuleList([
            CrossLayerMoE(in_features, num_experts, low_rank, residual_x0, single_tanh) for _ in range(layer_num)])

    def forward(self, x0):
        xl = x0
        for layer in self.layers:
            xl = layer(x0, xl)
        return xl


class DNNBlock(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features, eps=1e-5)

    def forward(self, x):
        return F.relu(self.bn(self.fc(x)))


class DCNV2(nn.Module):
    def __init__(self, residual_x0=False, single_tanh=False):
        super().__init__()
        self.embedding_tables = nn.ModuleList([nn.Embedding(n, EMBED_DIM) for n in FIELD_DIMS])
        self.crossnet = CrossNetV2(INPUT_DIM, LAYER_NUM, NUM_EXPERTS, LOW_RANK, residual_x0, single_tanh)
        dims = (INPUT_DIM, *HIDDEN_UNITS)
        self.mlp = nn.ModuleList([DNNBlock(dims[i], dims[i + 1]) for i in range(len(HIDDEN_UNITS))])
        self.cross_head = nn.Linear(INPUT_DIM, 1)
        self.deep_head = nn.Linear(HIDDEN_UNITS[-1], 1, bias=False)

    def forward(self, sparse_ids, dense):
        embs = [table(sparse_ids[:, i]) for i, table in enumerate(self.embedding_tables)]
        x0 = torch.cat(embs + [dense], dim=-1)
        cross_out = self.crossnet(x0)
        deep_out = x0
        for block in self.mlp:
            deep_out = block(deep_out)
        return self.cross_head(cross_out) + self.deep_head(deep_out)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_dcn_cross torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = DCNV2(residual_x0=bug == "torch_residual_x0", single_tanh=bug == "torch_expert_single_tanh")
    return m.eval()


def _data():
    rng = np.random.default_rng(39)
    ids = np.stack([rng.integers(0, v, BATCH) for v in FIELD_DIMS], axis=1).astype("int64")
    dense = rng.standard_normal((BATCH, DENSE_DIM)).astype("float32")
    return ids, dense


def inputs():
    ids, dense = _data()
    return (torch.from_numpy(ids), torch.from_numpy(dense)), {}


def loss(output):
    # click logits [6, 1]
    return (output**2).mean()
