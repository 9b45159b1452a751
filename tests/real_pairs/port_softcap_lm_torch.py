"""Hand-written port, torch side: a tiny Gemma-2 style causal LM with logit soft-capping (written by "person B").

The same math as port_softcap_lm_paddle.py, re-implemented by hand: vocab 64, d_model 32,
2 blocks (block 0 sliding window of 4 keys, block 1 global causal), 4 query heads sharing 2
key/value heads of 8 (query head h -> kv head h // 2), GeGLU hidden 64, input_ids [2, 12]
(positional), logits [2, 12, 64]. Embedding scaled by sqrt(32); attention scores q.k / sqrt(8)
soft-capped 4 * tanh(s / 4) before the mask; pre- AND post-norms around each sublayer; tied
output embedding; final soft-cap 5 * tanh(logits / 5). RMSNorm eps 1e-6.

Torch idioms on this side:
- root `GemmaLM`: `tok_emb` (`ScaledEmbedding`, an nn.Embedding subclass whose forward already
  multiplies by its non-persistent `embed_scale` buffer = sqrt(32), as in HF Gemma-3: its output
  is the SCALED embedding), `blocks` (ModuleList of `GemmaBlock`), `final_norm` (torch
  nn.RMSNorm). The head is tied: F.linear(x, self.tok_emb.weight) inline in the root forward,
  there is no head module. The final soft-cap is inline too.
- torch's nn.RMSNorm computes x / sqrt(mean(x^2) + eps) * weight, so every norm weight here holds
  the full scale 1 + w (the paddle side stores w and adds 1 in its forward).
- `GemmaBlock` registers `attn_norm`, `attn`, `attn_post_norm`, `ffn_norm`, `ffn`,
  `ffn_post_norm` (call order).
- `GemmaAttention`:
  - ONE fused `wqkv` Linear(32, 64, no bias): rows 0:32 = q, 32:48 = k, 48:64 = v;
  - rotary in the INTERLEAVED (GPT-J / Meta) layout: dims (2i, 2i + 1) form a pair, rotated
    with the non-persistent buffers `rope_cos` / `rope_sin` [16, 4] registered in each
    attention module. The q / k rows of `wqkv` are stored in that layout (a per-head
    permutation of the paddle q / k columns, as in the Meta <-> HF LLaMA conversion);
  - grouped-query attention without repeating k / v: q is reshaped to [B, 2 groups, 2, L, 8]
    and matmul broadcasts against k [B, 2, 1, L, 8];
  - a bool `allowed` buffer [16, 16] (causal, and banded for the sliding block),
    masked_fill(-inf) AFTER the soft-cap, torch.softmax, `wo`.
- `GeGLU`: ONE fused `w_gate_up` Linear(32, 128, no bias), chunked into gate | up,
  F.gelu(gate, approximate="tanh") * up inline, `w_down`.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_mask_before_softcap      -> the attention applies masked_fill(-inf) BEFORE the soft-cap:
                                    tanh(-inf) = -1, so every masked key gets the score -4 instead
                                    of -inf and leaks into the softmax, in every block
  torch_post_norm_after_residual -> the block applies the post-attention norm to the residual
                                    SUM, h = attn_post_norm(h + attn(attn_norm(h))), instead of
                                    h + attn_post_norm(attn(...)), in every block
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

N_VOCAB, D_MODEL, N_BLOCKS = 64, 32, 2
N_HEADS, N_KV, D_HEAD, D_FF = 4, 2, 8, 64
SLIDING, SOFTCAP_ATTN, SOFTCAP_FINAL = 4, 4.0, 5.0
MAX_LEN, NORM_EPS = 16, 1e-6
BATCH, SEQ = 2, 12
OWN_BUGS = {"torch_mask_before_softcap", "torch_post_norm_after_residual"}
OTHER_BUGS = {"paddle_norm_no_plus_one", "paddle_rope_bf16"}


class ScaledEmbedding(nn.Embedding):
    def __init__(self, num_embeddings, embedding_dim, embed_scale):
        super().__init__(num_embeddings, embedding_dim)
        self.register_buffer("embed_scale", torch.tensor(embed_scale), persistent=False)

    def forward(self, input_ids):
        return super().forward(input_ids) * self.embed_scale.to(self.weight.dtype)


def rope_tables(dim, max_len, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: dim // 2].float() / dim))
    angles = torch.outer(torch.arange(max_len, dtype=torch.float32), freqs)  # [max_len, dim/2]
    return torch.cos(angles), torch.sin(angles)


def apply_rotary(x, cos, sin):
    # x [B, H, L, D], pairs (2i, 2i+1); cos / sin [L, D/2]
    x = x.unflatten(-1, (-1, 2))
    x0, x1 = x[..., 0], x[..., 1]
    out = torch.stack([x0 * cos - x1 * sin, x0 * sin + x1 * cos], dim=-1)
    return out.flatten(-2)


class GemmaAttention(nn.Module):
    def __init__(self, sliding, mask_first=False):
        super().__init__()
        self.mask_first = mask_first
        self.wqkv = nn.Linear(D_MODEL, (N_HEADS + 2 * N_KV) * D_HEAD, bias=False)
        self.wo = nn.Linear(N_HEADS * D_HEAD, D_MODEL, bias=False)
        cos, sin = rope_tables(D_HEAD, MAX_LEN)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)
        allowed = torch.tril(torch.ones(MAX_LEN, MAX_LEN, dtype=torch.bool))
        if sliding:
            allowed &= torch.triu(torch.ones(MAX_LEN, MAX_LEN, dtype=torch.bool), diagonal=-(SLIDING - 1))
        self.register_buffer("allowed", allowed, persistent=False)

    def forward(self, x):
        B, T, _ = x.shape
        q, k, v = self.wqkv(x).split([N_HEADS * D_HEAD, N_KV * D_HEAD, N_KV * D_HEAD], dim=-1)
        q = q.view(B, T, N_HEADS, D_HEAD).transpose(1, 2)
        k = k.view(B, T, N_KV, D_HEAD).transpose(1, 2)
        v = v.view(B, T, N_KV, D_HEAD).transpose(1, 2)
        cos, sin = self.rope_cos[:T], self.rope_sin[:T]
        q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
        group = N_HEADS // N_KV
        q = q.view(B, N_KV, group, T, D_HEAD)
        att = torch.matmul(q, k.unsqueeze(2).transpose(-1, -2)) / math.sqrt(D_HEAD)  # [B, kv, g, T, T]
        allowed = self.allowed[:T, :T]
        if self.mask_first:
            att = att.masked_fill(~allowed, float("-inf"))
            att = SOFTCAP_ATTN * torch.tanh(att / SOFTCAP_ATTN)
        else:
            att = SOFTCAP_ATTN * torch.tanh(att / SOFTCAP_ATTN)
            att = att.masked_fill(~allowed, float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = torch.matmul(att, v.unsqueeze(2))  # [B, kv, g, T, D]
        y = y.reshape(B, N_HEADS, T, D_HEAD).transpose(1, 2).reshape(B, T, N_HEADS * D_HEAD)
        return self.wo(y)


class GeGLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.w_gate_up = nn.Linear(D_MODEL, 2 * D_FF, bias=False)
        self.w_down = nn.Linear(D_FF, D_MODEL, bias=False)

    def forward(self, x):
        gate, up = self.w_gate_up(x).chunk(2, dim=-1)
        return self.w_down(F.gelu(gate, approximate="tanh") * up)


class GemmaBlock(nn.Module):
    def __init__(self, sliding, mask_first=False, norm_after_residual=False):
        super().__init__()
        self.norm_after_residual = norm_after_residual
        self.attn_norm = nn.RMSNorm(D_MODEL, eps=NORM_EPS)
        self.attn = GemmaAttention(sliding, mask_first)
        self.attn_post_norm = nn.RMSNorm(D_MODEL, eps=NORM_EPS)
        self.ffn_norm = nn.RMSNorm(D_MODEL, eps=NORM_EPS)
        self.ffn = GeGLU()
        self.ffn_post_norm = nn.RMSNorm(D_MODEL, eps=NORM_EPS)

    def forward(self, x):
        if self.norm_after_residual:
            x = self.attn_post_norm(x + self.attn(self.attn_norm(x)))
        else:
            x = x + self.attn_post_norm(self.attn(self.attn_norm(x)))
        x = x + self.ffn_post_norm(self.ffn(self.ffn_norm(x)))
        return x


class GemmaLM(nn.Module):
    def __init__(self, mask_first=False, norm_after_residual=False):
        super().__init__()
        self.tok_emb = ScaledEmbedding(N_VOCAB, D_MODEL, D_MODEL**0.5)
        self.blocks = nn.ModuleList(
            [GemmaBlock(i % 2 == 0, mask_first, norm_after_residual) for i in range(N_BLOCKS)])
        self.final_norm = nn.RMSNorm(D_MODEL, eps=NORM_EPS)

    def forward(self, idx):
        x = self.tok_emb(idx)
        for block in self.blocks:
            x = block(x)
        x = self.final_norm(x)
        logits = F.linear(x, self.tok_emb.weight)  # tied
        return SOFTCAP_FINAL * torch.tanh(logits / SOFTCAP_FINAL)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_softcap_lm torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = GemmaLM(mask_first=bug == "torch_mask_before_softcap",
                norm_after_residual=bug == "torch_post_norm_after_residual")
    return m.eval()


def _ids():
    rng = np.random.default_rng(74)
    return rng.integers(0, N_VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # soft-capped logits [2, 12, 64]
    return (output**2).mean()
