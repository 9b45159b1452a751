"""Hand-written port, torch side: a tiny Granite-style decoder LM with muP scalars (written by "person B").

The same math as port_granite_paddle.py, re-implemented by hand: vocab 64, d_model 32, 4 query
heads of 8, 2 kv heads (query head h reads kv head h // 2), SwiGLU hidden 64, 2 blocks, RMSNorm
eps 1e-6, rotate-half rotary (theta 10000), causal attention, sequence length 12, batch 2.

This person FOLDS the muP scalars into modules of their own:
- `wte` = `ScaledEmbedding`: a wrapper holding the nn.Embedding `table` and the embedding
  multiplier (12.0); its forward returns table(ids) * 12.0.
- each `Block` owns two `Scale` modules, `attn_scale` and `mlp_scale` (residual multiplier
  0.22), applied to the sublayer output before the residual add.
- the root owns `logit_scale` = Scale(1 / logits_scaling) = Scale(1 / 6) after the head.
- the attention multiplier (0.125) stays an attribute `softmax_scale` of the attention, passed
  to F.scaled_dot_product_attention as `scale`.

Torch idioms on this side:
- root `GraniteLM`: `wte`, `blocks` (ModuleList of `Block`), `norm_f` (torch nn.RMSNorm), `head`
  (Linear(32, 64, no bias), untied), `logit_scale`.
- `Block` registers `norm1`, `norm2` (nn.RMSNorm), `attn`, `mlp`, `attn_scale`, `mlp_scale`.
- `GQAttention`: ONE fused `wqkv` Linear(32, 64, no bias): rows 0:32 = q, 32:48 = k, 48:64 = v;
  a `rotary` module (`RotaryEmbedding`, non-persistent `inv_freq` buffer) called as
  rotary(q, k) -> (q, k); kv heads expanded with expand + reshape; F.scaled_dot_product_attention
  (is_causal=True, scale=softmax_scale); `wo` Linear(32, 32, no bias).
- `SwiGLU`: ONE fused `w_in` Linear(32, 128, no bias) whose rows 0:64 are the UP projection and
  rows 64:128 the GATE; `up, gate = w_in(x).chunk(2)`; `w_out` Linear(64, 32).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_gqa_tiled      -> the kv heads are expanded with k.repeat(1, 2, 1, 1) (tiling:
                          kv0 kv1 kv0 kv1) instead of interleaving (kv0 kv0 kv1 kv1), so query
                          heads 1 and 2 read the wrong kv head
  torch_rope_bf16_table -> RotaryEmbedding rounds its cos / sin tables to bfloat16 (the
                           checkpoint dtype) before rotating the float32 q / k (precision-level)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB, D_MODEL, N_HEAD, N_KV_HEAD, FFN_DIM, N_LAYER = 64, 32, 4, 2, 64, 2
HEAD_DIM = D_MODEL // N_HEAD
NORM_EPS, ROPE_BASE = 1e-6, 10000.0
EMB_MULT, RESID_MULT, ATTN_MULT, LOGIT_DIV = 12.0, 0.22, 0.125, 6.0
BATCH, SEQ = 2, 12
OWN_BUGS = {"torch_gqa_tiled", "torch_rope_bf16_table"}
OTHER_BUGS = {"paddle_attn_scale_sqrt", "paddle_mlp_residual_unscaled"}


class Scale(nn.Module):
    def __init__(self, value):
        super().__init__()
        self.value = float(value)

    def forward(self, x):
        return x * self.value

    def extra_repr(self):
        return f"value={self.value}"


class ScaledEmbedding(nn.Module):
    def __init__(self, num, dim, multiplier):
        super().__init__()
        self.table = nn.Embedding(num, dim)
        self.multiplier = multiplier

    def forward(self, ids):
        return self.table(ids) * self.multiplier


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, base=ROPE_BASE, bf16_table=False):
        super().__init__()
        self.bf16_table = bf16_table
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    @staticmethod
    def _rotate_half(x):
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat((-x2, x1), dim=-1)

    def forward(self, q, k):
        seq = q.shape[-2]
        t = torch.arange(seq, dtype=torch.float32, device=q.device)
        freqs = torch.einsum("i,j->ij", t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        if self.bf16_table:  # "cache the table in the checkpoint dtype"
            cos, sin = cos.to(torch.bfloat16).float(), sin.to(torch.bfloat16).float()
        return q * cos + self._rotate_half(q) * sin, k * cos + self._rotate_half(k) * sin


class GQAttention(nn.Module):
    def __init__(self, tiled=False, bf16_table=False):
        super().__init__()
        self.tiled = tiled
        self.softmax_scale = ATTN_MULT
        self.q_size, self.kv_size = N_HEAD * HEAD_DIM, N_KV_HEAD * HEAD_DIM
        self.wqkv = nn.Linear(D_MODEL, self.q_size + 2 * self.kv_size, bias=False)
        self.rotary = RotaryEmbedding(HEAD_DIM, bf16_table=bf16_table)
        self.wo = nn.Linear(D_MODEL, D_MODEL, bias=False)

    def _expand_kv(self, t):
        b, hkv, seq, d = t.shape
        rep = N_HEAD // hkv
        if self.tiled:
            return t.repeat(1, rep, 1, 1)
        return t[:, :, None].expand(b, hkv, rep, seq, d).reshape(b, hkv * rep, seq, d)

    def forward(self, x):
        b, seq, _ = x.shape
        q, k, v = self.wqkv(x).split([self.q_size, self.kv_size, self.kv_size], dim=-1)
        q = q.view(b, seq, N_HEAD, HEAD_DIM).transpose(1, 2)
        k = k.view(b, seq, N_KV_HEAD, HEAD_DIM).transpose(1, 2)
        v = v.view(b, seq, N_KV_HEAD, HEAD_DIM).transpose(1, 2)
        q, k = self.rotary(q, k)
        k, v = self._expand_kv(k), self._expand_kv(v)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=self.softmax_scale)
        return self.wo(y.transpose(1, 2).reshape(b, seq, D_MODEL))


class SwiGLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.w_in = nn.Linear(D_MODEL, 2 * FFN_DIM, bias=False)
        self.w_out = nn.Linear(FFN_DIM, D_MODEL, bias=False)

    def forward(self, x):
        up, gate = self.w_in(x).chunk(2, dim=-1)
        return self.w_out(F.silu(gate) * up)


class Block(nn.Module):
    def __init__(self, tiled=False, bf16_table=False):
        super().__init__()
        self.norm1 = nn.RMSNorm(D_MODEL, eps=NORM_EPS)
        self.norm2 = nn.RMSNorm(D_MODEL, eps=NORM_EPS)
        self.attn = GQAttention(tiled, bf16_table)
        self.mlp = SwiGLU()
        self.attn_scale = Scale(RESID_MULT)
        self.mlp_scale = Scale(RESID_MULT)

    def forward(self, x):
        x = x + self.attn_scale(self.attn(self.norm1(x)))
        x = x + self.mlp_scale(self.mlp(self.norm2(x)))
        return x


class GraniteLM(nn.Module):
    def __init__(self, tiled=False, bf16_table=False):
        super().__init__()
        self.wte = ScaledEmbedding(VOCAB, D_MODEL, EMB_MULT)
        self.blocks = nn.ModuleList([Block(tiled, bf16_table) for _ in range(N_LAYER)])
        self.norm_f = nn.RMSNorm(D_MODEL, eps=NORM_EPS)
        self.head = nn.Linear(D_MODEL, VOCAB, bias=False)
        self.logit_scale = Scale(1.0 / LOGIT_DIV)

    def forward(self, idx):
        x = self.wte(idx)
        for block in self.blocks:
            x = block(x)
        return self.logit_scale(self.head(self.norm_f(x)))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_granite torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = GraniteLM(tiled=bug == "torch_gqa_tiled", bf16_table=bug == "torch_rope_bf16_table")
    return m.eval()


def _ids():
    rng = np.random.default_rng(31)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 12, 64]
    return (output**2).mean()
