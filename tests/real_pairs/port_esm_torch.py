"""Hand-written port, torch side: a tiny ESM-2-style protein language model (written by "person B").

The same math as port_esm_paddle.py, re-implemented from the ESM-2 paper / HF EsmForMaskedLM
description: ESM alphabet of 33 tokens (<cls>=0, <pad>=1, <eos>=2, amino acids 4..23,
<mask>=32), width 32, 4 heads of 8, FFN 64, 2 pre-LN layers (LayerNorm eps 1e-5), rotary
position embeddings (base 10000) on q and k with q scaled by 8^-0.5 first, key padding mask,
final LayerNorm, LM head dense -> gelu -> LayerNorm -> tied decoder + own bias. Input:
positional `tokens` int64 [2, 14] (numpy rng seed 52, 2 / 3 <mask> tokens, row 1 ends in two
<pad>). Output: logits [2, 14, 33].

Torch idioms on this side:
- root `ProteinBERT`: `embeddings` (`ESMEmbeddings`: child `word_embeddings` nn.Embedding; the
  token dropout, x *= (1 - 0.12) / (1 - n_mask / n_nonpad) per sequence after zeroing <mask>
  rows, and the pad zeroing are INLINE in its forward), `rope` (`RotaryTable`: non-persistent
  buffers `cos` / `sin` [64, 4] built once in __init__, called ONCE per forward with the hidden
  states and returning the [L, 4] tables that every block receives), `blocks` ModuleList of
  `Block`, `final_norm`, `lm_head` (`MaskedLMHead`: `dense`, `ln`, `decoder` nn.Linear(32, 33,
  bias=False) whose weight IS `embeddings.word_embeddings.weight`, and `bias` nn.Parameter [33]).
- `Block`: `ln1`, `attn` (`RotarySelfAttention`), `ln2`, `mlp` = nn.Sequential(Linear(32, 64),
  nn.GELU(), Linear(64, 32)).
- `RotarySelfAttention`: ONE fused `qkv` nn.Linear(32, 96) (rows 0:32 q, 32:64 k, 64:96 v) and
  `out`; the rotary is applied INLINE in the INTERLEAVED convention: pairs (2i, 2i + 1) of each
  head are rotated, (x0, x1) -> (x0 cos - x1 sin, x0 sin + x1 cos). So the q and k rows of `qkv`
  hold the paddle q_proj / k_proj output features permuted per head: torch feature 2i of a head
  = paddle feature i, torch feature 2i + 1 = paddle feature i + 4 (the same dot products, hence
  the same attention). The key padding mask is a boolean attn_mask; F.scaled_dot_product_attention
  with scale=1.0 (q is already scaled).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_batch_mask_ratio  -> the observed mask ratio is taken over the whole batch
                             (mask.sum() / nonpad.sum(), a scalar) instead of per sequence
  torch_rope_freq_halfdim -> RotaryTable's inverse frequencies use the exponent 2i / (D / 2)
                             instead of 2i / D (base ** (arange(0, D, 2) / (D // 2)))
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB_SIZE, HIDDEN, N_HEADS, INTERMEDIATE, N_LAYERS = 33, 32, 4, 64, 2
PAD_ID, MASK_ID, CLS_ID, EOS_ID = 1, 32, 0, 2
MAX_POS, ROPE_BASE = 64, 10000.0
BATCH, SEQ = 2, 14
OWN_BUGS = {"torch_batch_mask_ratio", "torch_rope_freq_halfdim"}
OTHER_BUGS = {"paddle_rotate_half_sign", "paddle_head_gelu_tanh"}


class ESMEmbeddings(nn.Module):
    def __init__(self, batch_ratio=False):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB_SIZE, HIDDEN, padding_idx=PAD_ID)
        self.mask_ratio_train = 0.15 * 0.8
        self.batch_ratio = batch_ratio

    def forward(self, input_ids):
        emb = self.word_embeddings(input_ids)
        is_mask = input_ids == MASK_ID
        nonpad = input_ids != PAD_ID
        emb = emb.masked_fill(is_mask.unsqueeze(-1), 0.0)
        if self.batch_ratio:
            ratio_obs = is_mask.sum().float() / nonpad.sum()
        else:
            ratio_obs = is_mask.sum(-1).float() / nonpad.sum(-1)
            ratio_obs = ratio_obs[:, None, None]
        emb = emb * (1 - self.mask_ratio_train) / (1 - ratio_obs)
        return emb * nonpad.unsqueeze(-1).to(emb.dtype)


class RotaryTable(nn.Module):
    def __init__(self, head_dim, halfdim_bug=False):
        super().__init__()
        denom = head_dim // 2 if halfdim_bug else head_dim
        inv_freq = 1.0 / (ROPE_BASE ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / denom))
        freqs = torch.outer(torch.arange(MAX_POS, dtype=torch.float32), inv_freq)  # [64, D/2]
        self.register_buffer("cos", freqs.cos(), persistent=False)
        self.register_buffer("sin", freqs.sin(), persistent=False)

    def forward(self, hidden_states):
        n = hidden_states.shape[1]
        return self.cos[:n], self.sin[:n]


def apply_rotary_interleaved(x, cos, sin):
    # x [B, H, L, D]; cos / sin [L, D/2]
    x0, x1 = x[..., 0::2], x[..., 1::2]
    r0 = x0 * cos - x1 * sin
    r1 = x0 * sin + x1 * cos
    return torch.stack((r0, r1), dim=-1).flatten(-2)


class RotarySelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.n_heads = N_HEADS
        self.head_dim = HIDDEN // N_HEADS
        self.qkv = nn.Linear(HIDDEN, 3 * HIDDEN)
        self.out = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, x, cos, sin, attn_mask):
        bsz, seq, _ = x.shape
        q, k, v = self.qkv(x).split(HIDDEN, dim=-1)
        q = q.view(bsz, seq, self.n_heads, self.head_dim).transpose(1, 2)
        k = k.view(bsz, seq, self.n_heads, self.head_dim).transpose(1, 2)
        v = v.view(bsz, seq, self.n_heads, self.head_dim).transpose(1, 2)
        q = q * self.head_dim**-0.5
        q = apply_rotary_interleaved(q, cos, sin)
        k = apply_rotary_interleaved(k, cos, sin)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, scale=1.0)
        return self.out(y.transpose(1, 2).reshape(bsz, seq, HIDDEN))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(HIDDEN, eps=1e-5)
        self.attn = RotarySelfAttention()
        self.ln2 = nn.LayerNorm(HIDDEN, eps=1e-5)
        self.mlp = nn.Sequential(nn.Linear(HIDDEN, INTERMEDIATE), nn.GELU(), nn.Linear(INTERMEDIATE, HIDDEN))

    def forward(self, x, cos, sin, attn_mask):
        x = x + self.attn(self.ln1(x), cos, sin, attn_mask)
        return x + self.mlp(self.ln2(x))


class MaskedLMHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(HIDDEN, HIDDEN)
        self.ln = nn.LayerNorm(HIDDEN, eps=1e-5)
        self.decoder = nn.Linear(HIDDEN, VOCAB_SIZE, bias=False)
        self.bias = nn.Parameter(torch.zeros(VOCAB_SIZE))

    def forward(self, h):
        h = self.ln(F.gelu(self.dense(h)))
        return self.decoder(h) + self.bias


class ProteinBERT(nn.Module):
    def __init__(self, batch_ratio=False, halfdim_bug=False):
        super().__init__()
        self.embeddings = ESMEmbeddings(batch_ratio)
        self.rope = RotaryTable(HIDDEN // N_HEADS, halfdim_bug)
        self.blocks = nn.ModuleList([Block() for _ in range(N_LAYERS)])
        self.final_norm = nn.LayerNorm(HIDDEN, eps=1e-5)
        self.lm_head = MaskedLMHead()
        self.lm_head.decoder.weight = self.embeddings.word_embeddings.weight

    def forward(self, input_ids):
        attn_mask = (input_ids != PAD_ID)[:, None, None, :]  # True = attend
        x = self.embeddings(input_ids)
        cos, sin = self.rope(x)
        for block in self.blocks:
            x = block(x, cos, sin, attn_mask)
        return self.lm_head(self.final_norm(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_esm torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = ProteinBERT(batch_ratio=bug == "torch_batch_mask_ratio", halfdim_bug=bug == "torch_rope_freq_halfdim")
    return m.eval()


def _tokens():
    rng = np.random.default_rng(52)
    toks = rng.integers(4, 24, (BATCH, SEQ)).astype("int64")
    toks[:, 0] = CLS_ID
    toks[0, SEQ - 1] = EOS_ID
    toks[1, SEQ - 3] = EOS_ID
    toks[1, SEQ - 2:] = PAD_ID
    toks[0, [3, 9]] = MASK_ID
    toks[1, [2, 5, 7]] = MASK_ID
    return toks


def inputs():
    return (torch.from_numpy(_tokens()),), {}


def loss(output):
    # masked-LM logits [2, 14, 33]
    return (output**2).mean()
