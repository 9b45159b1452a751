"""Hand-written port, torch side: a Set Transformer, written by "person B" in the style of the
official juho-lee/set_transformer `modules.py`.

The same math as port_set_transformer_paddle.py: input `x` [2, 10, 3] (positional), two ISABs
(8 inducing points, width 32, 4 heads), PMA with 2 seeds, a Linear(32, 5) decoder; output
[2, 2, 5]. Scores are scaled by 1 / sqrt(dim_V) = 1 / sqrt(32) and the attention residual adds
the projected query, as in the official code; rFF = Linear(32, 64) -> GELU -> Linear(64, 32).

Torch idioms on this side:
- root `SetTransformer`: `enc` = nn.Sequential(ISAB, ISAB), `dec` = nn.Sequential(PMA,
  nn.Linear(32, 5)).
- `ISAB` registers `I` first, an nn.Parameter of shape [1, 8, 32] (3-D, repeated over the batch),
  then `mab0` (I attends to X) and `mab1` (X attends to H). `PMA` registers `S` [1, 2, 32], then
  `mab`.
- `MAB`: `fc_q`, a FUSED `fc_kv` nn.Linear(dim_K, 64) (rows 0:32 = keys, 32:64 = values, split
  with chunk), heads split with the official idiom torch.cat(t.split(8, 2), 0) -> [4 * B, N, 8],
  scores with bmm, the attention INLINE in MAB.forward; then `ln0`, `ln1` and `rff` =
  nn.Sequential(Linear, GELU, Linear).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_softmax_over_queries -> the attention softmax is taken over dim 1 (the queries of the
                                [4B, Nq, Nk] score tensor) instead of dim 2 (the keys)
  torch_gelu_tanh            -> rff's activation is nn.GELU(approximate="tanh"): precision-level
"""
import math
import os

import numpy as np
import torch
from torch import nn

DIM_IN, DIM_HIDDEN, NUM_HEADS, DIM_FF = 3, 32, 4, 64
NUM_INDS, NUM_SEEDS, DIM_OUTPUT = 8, 2, 5
OWN_BUGS = {"torch_softmax_over_queries", "torch_gelu_tanh"}
OTHER_BUGS = {"paddle_attn_scale_head_dim", "paddle_rff_prenorm"}


class MAB(nn.Module):
    def __init__(self, dim_Q, dim_K, dim_V, num_heads, softmax_dim=2, gelu="none"):
        super().__init__()
        self.dim_V, self.num_heads, self.softmax_dim = dim_V, num_heads, softmax_dim
        self.fc_q = nn.Linear(dim_Q, dim_V)
        self.fc_kv = nn.Linear(dim_K, 2 * dim_V)
        self.ln0 = nn.LayerNorm(dim_V)
        self.ln1 = nn.LayerNorm(dim_V)
        self.rff = nn.Sequential(nn.Linear(dim_V, DIM_FF), nn.GELU(approximate=gelu), nn.Linear(DIM_FF, dim_V))

    def forward(self, Q, K):
        Q = self.fc_q(Q)
        K, V = self.fc_kv(K).chunk(2, dim=-1)
        dim_split = self.dim_V // self.num_heads
        Q_ = torch.cat(Q.split(dim_split, 2), 0)
        K_ = torch.cat(K.split(dim_split, 2), 0)
        V_ = torch.cat(V.split(dim_split, 2), 0)
        A = torch.softmax(Q_.bmm(K_.transpose(1, 2)) / math.sqrt(self.dim_V), self.softmax_dim)
        Out = torch.cat((Q_ + A.bmm(V_)).split(Q.size(0), 0), 2)
        Out = self.ln0(Out)
        return self.ln1(Out + self.rff(Out))


class ISAB(nn.Module):
    def __init__(self, dim_in, dim_out, num_heads, num_inds, **kw):
        super().__init__()
        self.I = nn.Parameter(torch.empty(1, num_inds, dim_out))
        nn.init.xavier_uniform_(self.I)
        self.mab0 = MAB(dim_out, dim_in, dim_out, num_heads, **kw)
        self.mab1 = MAB(dim_in, dim_out, dim_out, num_heads, **kw)

    def forward(self, X):
        H = self.mab0(self.I.repeat(X.size(0), 1, 1), X)
        return self.mab1(X, H)


class PMA(nn.Module):
    def __init__(self, dim, num_heads, num_seeds, **kw):
        super().__init__()
        self.S = nn.Parameter(torch.empty(1, num_seeds, dim))
        nn.init.xavier_uniform_(self.S)
        self.mab = MAB(dim, dim, dim, num_heads, **kw)

    def forward(self, X):
        return self.mab(self.S.repeat(X.size(0), 1, 1), X)


class SetTransformer(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.enc = nn.Sequential(
            ISAB(DIM_IN, DIM_HIDDEN, NUM_HEADS, NUM_INDS, **kw),
            ISAB(DIM_HIDDEN, DIM_HIDDEN, NUM_HEADS, NUM_INDS, **kw),
        )
        self.dec = nn.Sequential(PMA(DIM_HIDDEN, NUM_HEADS, NUM_SEEDS, **kw), nn.Linear(DIM_HIDDEN, DIM_OUTPUT))

    def forward(self, X):
        return self.dec(self.enc(X))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_set_transformer torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = SetTransformer(softmax_dim=1 if bug == "torch_softmax_over_queries" else 2,
                       gelu="tanh" if bug == "torch_gelu_tanh" else "none")
    return m.eval()


def _set():
    return np.random.default_rng(3232).standard_normal((2, 10, DIM_IN)).astype("float32")


def inputs():
    return (torch.from_numpy(_set()),), {}


def loss(output):
    # per-seed outputs [2, 2, 5]
    return (output**2).mean()
