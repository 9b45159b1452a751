"""Hand-written port, torch side: a tiny StableLM-2-style decoder LM (written by "person B").

The same math as port_stablelm_paddle.py, re-implemented by hand: vocab 96, width 64, 4 heads of
16, SwiGLU hidden 96, 2 parallel-residual blocks (x + attn(ln(x)) + ffn(ln(x))), LayerNorm with
bias (eps 1e-6), q / k / v with bias, per-head q / k LayerNorm (weight only), partial rotary on
8 of each head's 16 dims (base 10000), causal attention, untied head. Input: positional
`input_ids [2, 10]`. Output: logits [2, 10, 96].

Torch idioms on this side:
- root `TinyStableLM`: registers the rotary tables FIRST as non-persistent buffers `rope_cos`,
  `rope_sin` [32, 4] (one column per frequency, not duplicated), then `wte`, `blocks`
  (ModuleList of `ParallelBlock`), `ln_f`, `lm_head`. The root slices the tables to the sequence
  length once per forward and hands them to every block.
- `ParallelBlock` registers `attn`, `ffn`, then its single `norm` (called first).
- `SelfAttention`: ONE fused `Wqkv` nn.Linear(64, 192, bias=True), rows 0:64 q, 64:128 k,
  128:192 v; `q_norm` / `k_norm` = `HeadwiseLayerNorm` (ONE module per projection holding a
  [4, 16] weight, F.layer_norm without affine, then * weight[h]); `out_proj` (no bias). The
  partial rotary is a module-level helper (no module) called inline, in the INTERLEAVED (GPT-J)
  convention: within the first 8 dims of a head, dim 2i is paired with dim 2i + 1. The q / k
  rows of Wqkv (and their biases, and the q / k norm weights) are therefore stored in a
  permuted order compared with the paddle side's half-split convention: torch dim 2i = paddle
  dim i, torch dim 2i + 1 = paddle dim i + 4 (i < 4), dims 8..15 unchanged. The truth's
  transforms apply this permutation (port_stablelm_hook.py). Attention is
  F.scaled_dot_product_attention(is_causal=True).
- `SwiGLU`: separate `w1` (gate), `w3` (up), `w2` (down), no bias, F.silu inline.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_ln_default_eps   -> ParallelBlock builds its norm as nn.LayerNorm(64) without passing
                            eps, so the block norms use torch's default 1e-5 instead of the
                            model's 1e-6 (ln_f keeps 1e-6); precision-level
  torch_rotary_last_dims -> the partial-rotary helper rotates the LAST 8 dims of each head and
                            passes the first 8 through (x[..., -8:] / x[..., :-8]), in every
                            attention layer
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

N_VOCAB, D_MODEL, N_HEAD, D_HEAD, D_FF, N_LAYER = 96, 64, 4, 16, 96, 2
ROTARY_DIM, ROTARY_BASE, NORM_EPS, MAX_POS = 8, 10000.0, 1e-6, 32
BATCH, SEQ = 2, 10
OWN_BUGS = {"torch_ln_default_eps", "torch_rotary_last_dims"}
OTHER_BUGS = {"paddle_qk_norm_shared", "paddle_rope_freq_head_dim"}


def apply_partial_rotary(x, cos, sin, last_dims=False):
    """x [B, H, L, D]; cos / sin [L, ROTARY_DIM // 2]; interleaved pairs (2i, 2i + 1)."""
    if last_dims:
        x_pass, x_rot = x[..., :-ROTARY_DIM], x[..., -ROTARY_DIM:]
    else:
        x_rot, x_pass = x[..., :ROTARY_DIM], x[..., ROTARY_DIM:]
    x_even, x_odd = x_rot[..., 0::2], x_rot[..., 1::2]
    rot_even = x_even * cos - x_odd * sin
    rot_odd = x_odd * cos + x_even * sin
    x_rot = torch.stack((rot_even, rot_odd), dim=-1).flatten(-2)
    if last_dims:
        return torch.cat((x_pass, x_rot), dim=-1)
    return torch.cat((x_rot, x_pass), dim=-1)


class HeadwiseLayerNorm(nn.Module):
    def __init__(self, n_head, d_head, eps=NORM_EPS):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(n_head, d_head))

    def forward(self, x):  # [B, H, L, D]
        x = F.layer_norm(x, (x.shape[-1],), eps=self.eps)
        return x * self.weight[:, None, :]


class SelfAttention(nn.Module):
    def __init__(self, rotary_last_dims=False):
        super().__init__()
        self.rotary_last_dims = rotary_last_dims
        self.Wqkv = nn.Linear(D_MODEL, 3 * D_MODEL, bias=True)
        self.q_norm = HeadwiseLayerNorm(N_HEAD, D_HEAD)
        self.k_norm = HeadwiseLayerNorm(N_HEAD, D_HEAD)
        self.out_proj = nn.Linear(D_MODEL, D_MODEL, bias=False)

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        q, k, v = self.Wqkv(x).view(b, t, 3, N_HEAD, D_HEAD).permute(2, 0, 3, 1, 4)  # each [B, H, T, D]
        q = self.q_norm(q)
        k = self.k_norm(k)
        q = apply_partial_rotary(q, cos, sin, self.rotary_last_dims)
        k = apply_partial_rotary(k, cos, sin, self.rotary_last_dims)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).reshape(b, t, D_MODEL)
        return self.out_proj(y)


class SwiGLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(D_MODEL, D_FF, bias=False)
        self.w3 = nn.Linear(D_MODEL, D_FF, bias=False)
        self.w2 = nn.Linear(D_FF, D_MODEL, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class ParallelBlock(nn.Module):
    def __init__(self, ln_default_eps=False, rotary_last_dims=False):
        super().__init__()
        self.attn = SelfAttention(rotary_last_dims)
        self.ffn = SwiGLU()
        if ln_default_eps:
            self.norm = nn.LayerNorm(D_MODEL)
        else:
            self.norm = nn.LayerNorm(D_MODEL, eps=NORM_EPS)

    def forward(self, x, cos, sin):
        h = self.norm(x)
        return x + self.attn(h, cos, sin) + self.ffn(h)


class TinyStableLM(nn.Module):
    def __init__(self, **bugs):
        super().__init__()
        inv_freq = 1.0 / (ROTARY_BASE ** (torch.arange(0, ROTARY_DIM, 2, dtype=torch.float32) / ROTARY_DIM))
        angles = torch.outer(torch.arange(MAX_POS, dtype=torch.float32), inv_freq)  # [32, 4]
        self.register_buffer("rope_cos", angles.cos(), persistent=False)
        self.register_buffer("rope_sin", angles.sin(), persistent=False)
        self.wte = nn.Embedding(N_VOCAB, D_MODEL)
        self.blocks = nn.ModuleList([ParallelBlock(**bugs) for _ in range(N_LAYER)])
        self.ln_f = nn.LayerNorm(D_MODEL, eps=NORM_EPS)
        self.lm_head = nn.Linear(D_MODEL, N_VOCAB, bias=False)

    def forward(self, input_ids):
        t = input_ids.shape[1]
        cos, sin = self.rope_cos[:t], self.rope_sin[:t]
        x = self.wte(input_ids)
        for block in self.blocks:
            x = block(x, cos, sin)
        return self.lm_head(self.ln_f(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_stablelm torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = TinyStableLM(ln_default_eps=bug == "torch_ln_default_eps",
                     rotary_last_dims=bug == "torch_rotary_last_dims")
    return m.eval()


def _ids():
    rng = np.random.default_rng(44)
    return rng.integers(0, N_VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 10, 96]
    return (output**2).mean()
