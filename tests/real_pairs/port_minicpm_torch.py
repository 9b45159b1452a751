"""Hand-written port, torch side: a tiny MiniCPM-style decoder LM (written by "person B").

The same math as port_minicpm_paddle.py, re-implemented by hand: vocab 64, hidden 32, 4 heads of
8, SwiGLU intermediate 48, 2 pre-norm blocks, RMSNorm eps 1e-5, rotary base 10000, causal
softmax attention; embeddings x scale_emb (12), residual branches x scale_depth / sqrt(n_layers)
(1.4 / sqrt(2)), tied head fed with h / (hidden / dim_model_base) (h / 4). Input: positional
`input_ids` [2, 10]; output logits [2, 10, 64].

Torch idioms on this side:
- root `CPMLM` registers `embed` (`ScaledEmbedding`), `blocks` (ModuleList of `CPMBlock`),
  `final_norm`, then `lm_head` nn.Linear(32, 64, bias=False) whose weight IS `embed.weight`
  (assigned after construction, so named_parameters lists it once, as `embed.weight`). The
  division by hidden / dim_model_base (`logit_div`, a float attribute) is inline in the root
  forward, just before the lm_head call.
- `ScaledEmbedding(nn.Embedding)` multiplies by its `scale` INSIDE its own forward.
- `CPMBlock` registers `attn_norm`, `attn`, `ffn_norm`, `ffn`, `res_scale`. `res_scale` is a
  `DepthScale` module holding a persistent 0-d buffer `alpha` = scale_depth / sqrt(n_layers); the
  block calls that ONE module TWICE per forward (attention branch, then FFN branch).
- `RMSNorm` (hand-written, parameter named `scale`): x * rsqrt(mean(x^2) + eps) * scale.
- `CausalSelfAttention`: ONE fused `Wqkv` Linear(32, 96, bias=False), rows [q | k | v]; rotary
  with INTERLEAVED pairs (dims 2i, 2i+1 of a head rotate together, Meta/GPT-J layout) from
  non-persistent `rope_cos` / `rope_sin` buffers [16, 4] built in __init__, applied inline; so
  the q / k rows of Wqkv are the paddle q_proj / k_proj columns permuted within each head
  (half-split -> interleaved; q.k unchanged). Then F.scaled_dot_product_attention(is_causal=True)
  and `out_proj`.
- `SwiGLUFFN`: ONE fused `fc_in` Linear(32, 96, bias=False), rows [up | gate] (up FIRST), then
  silu(gate) * up and `fc_out`.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_emb_scale_sqrt_hidden -> ScaledEmbedding is built with scale = sqrt(hidden) (5.66, the
                                 Gemma-style normaliser) instead of scale_emb (12)
  torch_rmsnorm_variance      -> RMSNorm normalises by the variance x.var(-1) (mean removed)
                                 instead of the mean of squares, in every norm
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB_SIZE, DIM, N_HEAD, FFN_DIM, N_LAYER = 64, 32, 4, 48, 2
HEAD_DIM = DIM // N_HEAD
SCALE_EMB, SCALE_DEPTH, DIM_MODEL_BASE = 12.0, 1.4, 8
ROPE_BASE, NORM_EPS, MAX_LEN = 10000.0, 1e-5, 16
BATCH, SEQ = 2, 10
OWN_BUGS = {"torch_emb_scale_sqrt_hidden", "torch_rmsnorm_variance"}
OTHER_BUGS = {"paddle_depth_scale_linear", "paddle_rope_fp16_cache"}


class ScaledEmbedding(nn.Embedding):
    def __init__(self, num_embeddings, embedding_dim, scale):
        super().__init__(num_embeddings, embedding_dim)
        self.scale = scale

    def forward(self, input_ids):
        return super().forward(input_ids) * self.scale


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=NORM_EPS, use_variance=False):
        super().__init__()
        self.eps = eps
        self.use_variance = use_variance
        self.scale = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        if self.use_variance:
            ms = x.var(dim=-1, keepdim=True, unbiased=False)
        else:
            ms = x.pow(2).mean(dim=-1, keepdim=True)
        return x * torch.rsqrt(ms + self.eps) * self.scale


class DepthScale(nn.Module):
    def __init__(self, scale_depth, n_layers):
        super().__init__()
        self.register_buffer("alpha", torch.tensor(scale_depth / math.sqrt(n_layers)))

    def forward(self, x):
        return x * self.alpha


def apply_rotary_interleaved(x, cos, sin):
    # x [B, H, L, D]; cos / sin [L, D/2]; pairs (2i, 2i+1)
    x_even, x_odd = x[..., 0::2], x[..., 1::2]
    out_even = x_even * cos - x_odd * sin
    out_odd = x_even * sin + x_odd * cos
    return torch.stack((out_even, out_odd), dim=-1).flatten(-2)


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.n_head, self.head_dim = N_HEAD, HEAD_DIM
        self.Wqkv = nn.Linear(DIM, 3 * DIM, bias=False)
        self.out_proj = nn.Linear(DIM, DIM, bias=False)
        inv_freq = 1.0 / (ROPE_BASE ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.float32) / HEAD_DIM))
        angles = torch.outer(torch.arange(MAX_LEN, dtype=torch.float32), inv_freq)
        self.register_buffer("rope_cos", angles.cos(), persistent=False)
        self.register_buffer("rope_sin", angles.sin(), persistent=False)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.Wqkv(x).split(c, dim=-1)
        q = q.view(b, t, self.n_head, self.head_dim).transpose(1, 2)
        k = k.view(b, t, self.n_head, self.head_dim).transpose(1, 2)
        v = v.view(b, t, self.n_head, self.head_dim).transpose(1, 2)
        cos, sin = self.rope_cos[:t], self.rope_sin[:t]
        q = apply_rotary_interleaved(q, cos, sin)
        k = apply_rotary_interleaved(k, cos, sin)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out_proj(y.transpose(1, 2).reshape(b, t, c))


class SwiGLUFFN(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc_in = nn.Linear(DIM, 2 * FFN_DIM, bias=False)
        self.fc_out = nn.Linear(FFN_DIM, DIM, bias=False)

    def forward(self, x):
        up, gate = self.fc_in(x).chunk(2, dim=-1)
        return self.fc_out(F.silu(gate) * up)


class CPMBlock(nn.Module):
    def __init__(self, norm_variance=False):
        super().__init__()
        self.attn_norm = RMSNorm(DIM, use_variance=norm_variance)
        self.attn = CausalSelfAttention()
        self.ffn_norm = RMSNorm(DIM, use_variance=norm_variance)
        self.ffn = SwiGLUFFN()
        self.res_scale = DepthScale(SCALE_DEPTH, N_LAYER)

    def forward(self, x):
        x = x + self.res_scale(self.attn(self.attn_norm(x)))
        x = x + self.res_scale(self.ffn(self.ffn_norm(x)))
        return x


class CPMLM(nn.Module):
    def __init__(self, emb_scale=SCALE_EMB, norm_variance=False):
        super().__init__()
        self.embed = ScaledEmbedding(VOCAB_SIZE, DIM, emb_scale)
        self.blocks = nn.ModuleList([CPMBlock(norm_variance) for _ in range(N_LAYER)])
        self.final_norm = RMSNorm(DIM, use_variance=norm_variance)
        self.lm_head = nn.Linear(DIM, VOCAB_SIZE, bias=False)
        self.lm_head.weight = self.embed.weight  # tied
        self.logit_div = DIM / DIM_MODEL_BASE

    def forward(self, input_ids):
        x = self.embed(input_ids)
        for block in self.blocks:
            x = block(x)
        x = self.final_norm(x)
        return self.lm_head(x / self.logit_div)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_minicpm torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = CPMLM(
        emb_scale=math.sqrt(DIM) if bug == "torch_emb_scale_sqrt_hidden" else SCALE_EMB,
        norm_variance=bug == "torch_rmsnorm_variance",
    )
    return m.eval()


def _ids():
    return np.random.default_rng(46).integers(0, VOCAB_SIZE, (BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 10, 64]
    return (output**2).mean()
