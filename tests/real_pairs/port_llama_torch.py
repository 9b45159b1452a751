"""Hand-written port, torch side: a tiny LLaMA-like decoder LM (written by "person B").

The same math as port_llama_paddle.py, written in the style of Meta's reference llama code:
Transformer(tok_embeddings, layers = ModuleList of TransformerBlock, norm, output). Each block:
attention (wq, wk, wv, wo), feed_forward (FeedForward with ONE fused `w13` Linear(32, 128),
rows gate | up, and `w2`), attention_norm, ffn_norm. Norms are torch's built-in nn.RMSNorm
(eps 1e-5). Sizes as the paddle side: vocab 96, hidden 32, 4 query heads, 2 kv heads, head dim
8, intermediate 64, 2 layers, no biases, untied `output` head.

- Rotary embeddings with complex numbers, on INTERLEAVED pairs (dims 2i, 2i+1 of a head form one
  complex number): the attention computes freqs_cis = torch.polar(1, t * inv_freq) on the fly
  in its forward (no buffer) and applies it with torch.view_as_complex / view_as_real. The
  paddle side rotates half-split pairs (i, i + 4) with rotate_half, so wq / wk rows are the
  paddle q_proj / k_proj columns permuted per head (the inverse of HF's convert_llama_weights
  permute; port_llama_hook.py). wv, wo need no permutation.
- Grouped-query attention: kv heads repeated with expand + reshape (Meta's repeat_kv, the same
  order as repeat_interleave); explicit matmul, scaled by 1/sqrt(8), an additive [T, T] causal
  mask built in Transformer.forward and passed to every block; softmax in float32.

Planted bugs (PADIFF_BUG), see port_llama_truth.json:
  kv_repeat_tile -> the kv heads are repeated with .repeat (tiled: kv heads 0, 1, 0, 1 for the
                    4 query heads) instead of repeat_interleave order (0, 0, 1, 1)
  softmax_fp16   -> the attention softmax runs in float16 (scores.half()) and is cast back
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB, DIM, N_HEADS, N_KV_HEADS, HIDDEN_DIM, N_LAYERS = 96, 32, 4, 2, 64, 2
HEAD_DIM = DIM // N_HEADS
NORM_EPS, ROPE_THETA = 1e-5, 10000.0
BATCH, SEQ = 2, 12
OWN_BUGS = {"kv_repeat_tile", "softmax_fp16"}
OTHER_BUGS = {"paddle_rms_eps"}


def precompute_freqs_cis(dim, end, theta=ROPE_THETA):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, dtype=torch.float32)
    freqs = torch.outer(t, freqs)
    return torch.polar(torch.ones_like(freqs), freqs)  # complex64 [end, dim / 2]


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = freqs_cis.view(1, xq_.shape[1], 1, xq_.shape[-1])
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def repeat_kv(x, n_rep):
    """torch.repeat_interleave(x, dim=2, repeats=n_rep)"""
    bs, slen, n_kv_heads, head_dim = x.shape
    if n_rep == 1:
        return x
    return (x[:, :, :, None, :].expand(bs, slen, n_kv_heads, n_rep, head_dim)
            .reshape(bs, slen, n_kv_heads * n_rep, head_dim))


class Attention(nn.Module):
    def __init__(self, tile_kv=False, softmax_fp16=False):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = N_HEADS, N_KV_HEADS, HEAD_DIM
        self.n_rep = N_HEADS // N_KV_HEADS
        self.wq = nn.Linear(DIM, N_HEADS * HEAD_DIM, bias=False)
        self.wk = nn.Linear(DIM, N_KV_HEADS * HEAD_DIM, bias=False)
        self.wv = nn.Linear(DIM, N_KV_HEADS * HEAD_DIM, bias=False)
        self.wo = nn.Linear(N_HEADS * HEAD_DIM, DIM, bias=False)
        self.tile_kv, self.softmax_fp16 = tile_kv, softmax_fp16

    def forward(self, x, mask):
        bsz, seqlen, _ = x.shape
        xq = self.wq(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xk = self.wk(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim)
        xv = self.wv(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim)
        freqs_cis = precompute_freqs_cis(self.head_dim, seqlen)  # on the fly, no buffer
        xq, xk = apply_rotary_emb(xq, xk, freqs_cis)
        if self.tile_kv:  # the bug: tiled, kv heads 0, 1, 0, 1
            keys, values = xk.repeat(1, 1, self.n_rep, 1), xv.repeat(1, 1, self.n_rep, 1)
        else:
            keys, values = repeat_kv(xk, self.n_rep), repeat_kv(xv, self.n_rep)
        xq, keys, values = xq.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
        scores = scores + mask
        if self.softmax_fp16:  # the bug: softmax in half precision
            scores = F.softmax(scores.half(), dim=-1).type_as(xq)
        else:
            scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        output = torch.matmul(scores, values)
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.wo(output)


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.w13 = nn.Linear(DIM, 2 * HIDDEN_DIM, bias=False)  # gate | up
        self.w2 = nn.Linear(HIDDEN_DIM, DIM, bias=False)

    def forward(self, x):
        x1, x3 = self.w13(x).chunk(2, dim=-1)
        return self.w2(F.silu(x1) * x3)


class TransformerBlock(nn.Module):
    def __init__(self, layer_id, **bugs):
        super().__init__()
        self.layer_id = layer_id
        self.attention = Attention(**bugs)
        self.feed_forward = FeedForward()
        self.attention_norm = nn.RMSNorm(DIM, eps=NORM_EPS)
        self.ffn_norm = nn.RMSNorm(DIM, eps=NORM_EPS)

    def forward(self, x, mask):
        h = x + self.attention(self.attention_norm(x), mask)
        return h + self.feed_forward(self.ffn_norm(h))


class Transformer(nn.Module):
    def __init__(self, **bugs):
        super().__init__()
        self.tok_embeddings = nn.Embedding(VOCAB, DIM)
        self.layers = nn.ModuleList(TransformerBlock(i, **bugs) for i in range(N_LAYERS))
        self.norm = nn.RMSNorm(DIM, eps=NORM_EPS)
        self.output = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, tokens):
        _bsz, seqlen = tokens.shape
        h = self.tok_embeddings(tokens)
        mask = torch.full((seqlen, seqlen), float("-inf"), device=tokens.device)
        mask = torch.triu(mask, diagonal=1).type_as(h)
        for layer in self.layers:
            h = layer(h, mask)
        return self.output(self.norm(h)).float()


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_llama torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = Transformer(tile_kv=bug == "kv_repeat_tile", softmax_fp16=bug == "softmax_fp16")
    return m.eval()


def _ids():
    rng = np.random.default_rng(7)
    return rng.integers(0, VOCAB, size=(BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [B, T, VOCAB] through the output head (not an RMSNorm output itself)
    return (output**2).mean()
