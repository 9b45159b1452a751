"""Hand-written port, torch side: a tiny Baichuan-13B-style decoder LM (written by "person B").

The same math as port_baichuan_paddle.py, re-implemented by hand from the Baichuan-13B /
Baichuan2 description. Sizes: vocab 64, width 48, 6 heads of 8, SwiGLU hidden 96, 2 layers,
sequence length 12, batch 2, RMSNorm eps 1e-6, no biases, ALiBi attention bias, NormHead.
Input: positional `input_ids` [2, 12] int64 (numpy rng seed 61). Output: logits [2, 12, 64].

ALiBi here: bias[h, i, j] = slope_h * (j - i) (the relative form; Baichuan's slope_h * j differs
by a per-row constant, which softmax removes), -inf for j > i. Slopes by the BLOOM-style closed
form for a head count that is not a power of two: the 4 slopes 2^(-2 k), k = 1..4, then the odd
powers 2^(-1 k), k = 1, 3, of the 8-head base: 1/4, 1/16, 1/64, 1/256, 1/2, 1/8.

Torch idioms on this side:
- root `BaichuanLM`: `embedding`, `blocks` (ModuleList of `BaichuanBlock`), `final_norm`
  (torch's nn.RMSNorm), `output` (`NormalizedLinear`, an nn.Linear subclass whose forward
  uses F.normalize(weight, dim=-1): every vocab row of the [64, 48] weight).
- `BaichuanBlock`: `pre_attn_norm`, `attention`, `pre_ffn_norm`, `ffn` (nn.RMSNorm, eps 1e-6).
- `AlibiSelfAttention`: a non-persistent buffer `alibi_slopes` [6] registered FIRST, then THREE
  Linears `to_q`, `to_k`, `to_v` (48 -> 48) and `to_out`; the bias slope * (j - i) and the causal
  -inf are built inline in the forward and given to F.scaled_dot_product_attention as a float
  attn_mask (default scale 1 / sqrt(8)).
- `GatedFFN`: ONE fused `gate_up` Linear(48, 192) (rows 0:96 gate, 96:192 up), `down`, F.silu
  inline.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_alibi_slopes_pow2_formula -> the slopes come from the ALiBi paper's power-of-two
                                     formula 2^(-8 (h + 1) / n) with n = 6 (0.397, 0.157,
                                     0.0625, 0.0248, 0.0098, 0.0039) instead of the
                                     non-power-of-two interleave, in both attentions
  torch_final_norm_eps_default    -> `final_norm` is built as nn.RMSNorm(48) without eps: torch
                                     then uses finfo(float32).eps = 1.19e-7 instead of 1e-6 (the
                                     block norms keep eps=1e-6)
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB, D_MODEL, N_HEAD, N_LAYER, D_FF = 64, 48, 6, 2, 96
EPS = 1e-6
BATCH, SEQ = 2, 12
OWN_BUGS = {"torch_alibi_slopes_pow2_formula", "torch_final_norm_eps_default"}
OTHER_BUGS = {"paddle_wpack_head_interleaved", "paddle_normhead_wrong_axis"}


def alibi_slopes(n_head, pow2_formula=False):
    if pow2_formula:
        return torch.pow(2.0, -8.0 * torch.arange(1, n_head + 1, dtype=torch.float32) / n_head)
    closest = 2 ** math.floor(math.log2(n_head))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest) - 3))), dtype=torch.float32)
    slopes = torch.pow(base, torch.arange(1, 1 + closest, dtype=torch.float32))
    if closest != n_head:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest) - 3))), dtype=torch.float32)
        n_extra = min(closest, n_head - closest)
        extra = torch.pow(extra_base, torch.arange(1, 1 + 2 * n_extra, 2, dtype=torch.float32))
        slopes = torch.cat([slopes, extra])
    return slopes


class AlibiSelfAttention(nn.Module):
    def __init__(self, pow2_formula=False):
        super().__init__()
        self.register_buffer("alibi_slopes", alibi_slopes(N_HEAD, pow2_formula), persistent=False)
        self.n_head = N_HEAD
        self.d_head = D_MODEL // N_HEAD
        self.to_q = nn.Linear(D_MODEL, D_MODEL, bias=False)
        self.to_k = nn.Linear(D_MODEL, D_MODEL, bias=False)
        self.to_v = nn.Linear(D_MODEL, D_MODEL, bias=False)
        self.to_out = nn.Linear(D_MODEL, D_MODEL, bias=False)

    def forward(self, x):
        b, t, _ = x.shape
        q = self.to_q(x).view(b, t, self.n_head, self.d_head).transpose(1, 2)
        k = self.to_k(x).view(b, t, self.n_head, self.d_head).transpose(1, 2)
        v = self.to_v(x).view(b, t, self.n_head, self.d_head).transpose(1, 2)
        pos = torch.arange(t, device=x.device)
        rel = (pos[None, :] - pos[:, None]).to(q.dtype)  # j - i
        bias = self.alibi_slopes[:, None, None] * rel  # [H, T, T]
        future = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
        bias = bias.masked_fill(future, float("-inf"))
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=bias.unsqueeze(0))
        y = y.transpose(1, 2).reshape(b, t, D_MODEL)
        return self.to_out(y)


class GatedFFN(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_up = nn.Linear(D_MODEL, 2 * D_FF, bias=False)
        self.down = nn.Linear(D_FF, D_MODEL, bias=False)

    def forward(self, x):
        gate, up = self.gate_up(x).split(D_FF, dim=-1)
        return self.down(F.silu(gate) * up)


class BaichuanBlock(nn.Module):
    def __init__(self, pow2_formula=False):
        super().__init__()
        self.pre_attn_norm = nn.RMSNorm(D_MODEL, eps=EPS)
        self.attention = AlibiSelfAttention(pow2_formula)
        self.pre_ffn_norm = nn.RMSNorm(D_MODEL, eps=EPS)
        self.ffn = GatedFFN()

    def forward(self, x):
        x = x + self.attention(self.pre_attn_norm(x))
        return x + self.ffn(self.pre_ffn_norm(x))


class NormalizedLinear(nn.Linear):
    """Baichuan2's NormHead as a Linear: the rows of the weight are unit vectors."""

    def forward(self, x):
        return F.linear(x, F.normalize(self.weight, dim=-1))


class BaichuanLM(nn.Module):
    def __init__(self, pow2_formula=False, final_eps_default=False):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, D_MODEL)
        self.blocks = nn.ModuleList([BaichuanBlock(pow2_formula) for _ in range(N_LAYER)])
        self.final_norm = nn.RMSNorm(D_MODEL) if final_eps_default else nn.RMSNorm(D_MODEL, eps=EPS)
        self.output = NormalizedLinear(D_MODEL, VOCAB, bias=False)

    def forward(self, input_ids):
        x = self.embedding(input_ids)
        for block in self.blocks:
            x = block(x)
        return self.output(self.final_norm(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_baichuan torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = BaichuanLM(
        pow2_formula=bug == "torch_alibi_slopes_pow2_formula",
        final_eps_default=bug == "torch_final_norm_eps_default",
    )
    return m.eval()


def _ids():
    rng = np.random.default_rng(61)
    return rng.integers(0, VOCAB, size=(BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 12, 64]
    return (output**2).mean()
