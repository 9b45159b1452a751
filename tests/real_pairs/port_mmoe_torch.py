"""Hand-written port, torch side: an MMoE multi-task recommender (written by "person B").

The same math as port_mmoe_paddle.py, re-implemented by hand: inputs sparse_ids [8, 3] int64
(vocabularies 10 / 8 / 6) and dense [8, 5] float32 (positional), 4-dim field embeddings, a
standardised dense block, 4 experts (17 -> 16 -> 8, ReLU after both layers), one softmax gate
per task over the experts, and per-task towers (8 -> 8 -> 1, sigmoid). Output: [8, 2] task
probabilities (column 0: "ctr", column 1: "cvr").

Torch idioms on this side:
- root `MultiGateMoE` registers, in this order: `embedding` (ONE nn.Embedding(24, 4) table for
  all fields, with a non-persistent `field_offsets` buffer [0, 10, 18] added to the ids inline in
  the root forward), `experts` (`StackedExperts`), `gate` (ONE fused nn.Linear(17, 8) for both
  tasks, viewed as [B, 2, 4]), `gate_act` (nn.Softmax(dim=-1)), `towers` (nn.ModuleDict
  {"ctr", "cvr"} of nn.Sequential(Linear, ReLU, Linear, Sigmoid)) and LAST `dense_norm`
  (`DenseStandardize`, called before the experts).
- `StackedExperts` keeps the four experts as batched parameters `w1` [4, 17, 16], `b1` [4, 16],
  `w2` [4, 16, 8], `b2` [4, 8] ([E, in, out] layout) and runs them with torch.baddbmm on the
  input expanded to [4, B, 17]; the ReLUs are inline; its [4, B, 8] result is permuted to
  [B, 4, 8].
- `DenseStandardize`: hand-written (x - running_mean) / sqrt(running_var + eps) * weight + bias,
  eps 1e-3, statistics as buffers, affine as parameters.
- The task mixture is a torch.einsum("bte,bed->btd") inline in the root forward.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_experts_reshape    -> StackedExperts turns its [E, B, D] result into [B, E, D] with
                              .reshape instead of .permute, scrambling which expert / sample
                              each row holds
  torch_dense_eps_outside  -> DenseStandardize divides by sqrt(var) + eps instead of
                              sqrt(var + eps) (precision-level)
"""
import os

import numpy as np
import torch
from torch import nn

FIELD_VOCABS = (10, 8, 6)
EMBED_DIM, DENSE_DIM = 4, 5
INPUT_DIM = len(FIELD_VOCABS) * EMBED_DIM + DENSE_DIM
NUM_EXPERTS, HIDDEN, EXPERT_DIM = 4, 16, 8
TASKS = ("ctr", "cvr")
TOWER_DIM = 8
EPS = 1e-3
BATCH = 8
OWN_BUGS = {"torch_experts_reshape", "torch_dense_eps_outside"}
OTHER_BUGS = {"paddle_expert_no_out_relu", "paddle_gate_softmax_axis0"}


class DenseStandardize(nn.Module):
    def __init__(self, dim, eps=EPS, eps_outside=False):
        super().__init__()
        self.eps, self.eps_outside = eps, eps_outside
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))
        self.register_buffer("running_mean", torch.zeros(dim))
        self.register_buffer("running_var", torch.ones(dim))

    def forward(self, x):
        if self.eps_outside:
            x = (x - self.running_mean) / (self.running_var.sqrt() + self.eps)
        else:
            x = (x - self.running_mean) / torch.sqrt(self.running_var + self.eps)
        return x * self.weight + self.bias


class StackedExperts(nn.Module):
    def __init__(self, num_experts, in_dim, hidden, out_dim, use_reshape=False):
        super().__init__()
        self.use_reshape = use_reshape
        self.w1 = nn.Parameter(torch.randn(num_experts, in_dim, hidden) * in_dim**-0.5)
        self.b1 = nn.Parameter(torch.zeros(num_experts, hidden))
        self.w2 = nn.Parameter(torch.randn(num_experts, hidden, out_dim) * hidden**-0.5)
        self.b2 = nn.Parameter(torch.zeros(num_experts, out_dim))

    def forward(self, x):
        n_exp = self.w1.shape[0]
        xe = x.unsqueeze(0).expand(n_exp, -1, -1)  # [E, B, in]
        h = torch.relu(torch.baddbmm(self.b1.unsqueeze(1), xe, self.w1))  # [E, B, hidden]
        out = torch.relu(torch.baddbmm(self.b2.unsqueeze(1), h, self.w2))  # [E, B, out]
        if self.use_reshape:
            return out.reshape(x.shape[0], n_exp, -1)
        return out.permute(1, 0, 2)  # [B, E, out]


class MultiGateMoE(nn.Module):
    def __init__(self, use_reshape=False, eps_outside=False):
        super().__init__()
        self.embedding = nn.Embedding(sum(FIELD_VOCABS), EMBED_DIM)
        offsets = torch.tensor((0,) + FIELD_VOCABS[:-1]).cumsum(0)
        self.register_buffer("field_offsets", offsets, persistent=False)
        self.experts = StackedExperts(NUM_EXPERTS, INPUT_DIM, HIDDEN, EXPERT_DIM, use_reshape)
        self.gate = nn.Linear(INPUT_DIM, len(TASKS) * NUM_EXPERTS)
        self.gate_act = nn.Softmax(dim=-1)
        self.towers = nn.ModuleDict({
            task: nn.Sequential(nn.Linear(EXPERT_DIM, TOWER_DIM), nn.ReLU(), nn.Linear(TOWER_DIM, 1), nn.Sigmoid())
            for task in TASKS
        })
        self.dense_norm = DenseStandardize(DENSE_DIM, eps_outside=eps_outside)

    def forward(self, sparse_ids, dense):
        b = sparse_ids.shape[0]
        emb = self.embedding(sparse_ids + self.field_offsets).flatten(1)  # [B, 12]
        x = torch.cat([emb, self.dense_norm(dense)], dim=1)  # [B, 17]
        expert_out = self.experts(x)  # [B, E, D]
        gates = self.gate_act(self.gate(x).view(b, len(TASKS), NUM_EXPERTS))  # [B, T, E]
        mix = torch.einsum("bte,bed->btd", gates, expert_out)  # [B, T, D]
        return torch.cat([self.towers[task](mix[:, t]) for t, task in enumerate(TASKS)], dim=1)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_mmoe torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = MultiGateMoE(use_reshape=bug == "torch_experts_reshape", eps_outside=bug == "torch_dense_eps_outside")
    return m.eval()


def _data():
    rng = np.random.default_rng(77)
    ids = np.stack([rng.integers(0, v, BATCH) for v in FIELD_VOCABS], axis=1).astype("int64")
    dense = rng.normal(0.5, 1.5, (BATCH, DENSE_DIM)).astype("float32")
    return ids, dense


def inputs():
    ids, dense = _data()
    return (torch.from_numpy(ids), torch.from_numpy(dense)), {}


def loss(output):
    # task probabilities [8, 2]: binary cross-entropy against fixed labels
    labels = torch.tensor([[1, 0], [0, 0], [1, 1], [0, 0], [1, 0], [0, 0], [1, 1], [0, 1]], dtype=torch.float32)
    return nn.functional.binary_cross_entropy(output, labels)
