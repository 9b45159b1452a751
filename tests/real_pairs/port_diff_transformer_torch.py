"""Hand-written port, torch side: a tiny Differential Transformer decoder LM (written by "person B").

The same math as port_diff_transformer_paddle.py, re-implemented by hand in the style of Meta's
LLaMA reference code: positional `input_ids` [2, 12], vocab 64, width 32, 2 layers, 2
differential heads (q / k maps of width 8, value width 16), SwiGLU hidden 64, RMSNorm eps 1e-5,
rotary theta 10000, logits [2, 12, 64] from a head tied to the embedding.

Torch idioms on this side:
- root `DiffTransformer`: `tok_embeddings`, `layers` (ModuleList of `TransformerBlock`),
  `norm` (torch nn.RMSNorm), `output` Linear(32, 64, bias=False) whose weight IS
  tok_embeddings.weight (tied by assignment; named_parameters lists it once), and a complex64
  buffer `freqs_cis` [16, 4] (non-persistent, built once in __init__, sliced to the sequence
  length in the forward).
- `TransformerBlock`: `attention_norm`, `attention`, `ffn_norm`, and the SwiGLU weights `w1`
  (gate), `w3` (up), `w2` (down) directly on the block: the FFN is inline in the block forward
  (no FFN module).
- `DiffAttention`: ONE fused `wqkv` Linear(32, 96, bias=False) (rows q | k | v), ONE packed
  `lambda_qk` parameter [4, 8] (rows lambda_q1, lambda_k1, lambda_q2, lambda_k2), a buffer
  `lambda_init` (non-persistent scalar), `head_norm` nn.RMSNorm(16, eps=1e-5) applied to
  [B, H, L, 16], `wo`. The rotary is applied with complex multiplication (view_as_complex of
  consecutive feature pairs, i.e. interleaved pairs); the causal mask is masked_fill of a bool
  triu built inline.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_subln_eps_default    -> the per-head norm is built as nn.RMSNorm(16) with no eps, so
                                torch uses finfo(float32).eps = 1.19e-7 instead of 1e-5
                                (precision-level)
  torch_diff_maps_misgrouped -> the [B, 2H, L, L] softmax maps are viewed as [B, 2, H, L, L]
                                instead of [B, H, 2, L, L], so head h subtracts map H + h from
                                map h instead of map 2h + 1 from map 2h
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB_SIZE, D_MODEL, N_LAYER, N_HEAD, HIDDEN = 64, 32, 2, 2, 64
HEAD_DIM = D_MODEL // N_HEAD // 2
NORM_EPS = 1e-5
ROPE_THETA = 10000.0
MAX_SEQ_LEN = 16
BATCH, SEQ = 2, 12
OWN_BUGS = {"torch_subln_eps_default", "torch_diff_maps_misgrouped"}
OTHER_BUGS = {"paddle_rmsnorm_one_plus_weight", "paddle_ffn_gelu_gate"}


def precompute_freqs_cis(dim, end, theta=ROPE_THETA):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, dtype=torch.float32)
    freqs = torch.outer(t, freqs)
    return torch.polar(torch.ones_like(freqs), freqs)  # complex64 [end, dim / 2]


def apply_rotary_emb(x, freqs_cis):
    # x [B, L, N, D]; freqs_cis [L, D / 2]
    x_ = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    out = torch.view_as_real(x_ * freqs_cis[None, :, None, :]).flatten(3)
    return out.type_as(x)


class DiffAttention(nn.Module):
    def __init__(self, layer_id, default_eps=False, misgrouped=False):
        super().__init__()
        self.n_heads = N_HEAD
        self.head_dim = HEAD_DIM
        self.misgrouped = misgrouped
        self.wqkv = nn.Linear(D_MODEL, 3 * D_MODEL, bias=False)
        self.lambda_qk = nn.Parameter(torch.zeros(4, HEAD_DIM).normal_(0.0, 0.1))
        self.register_buffer(
            "lambda_init", torch.tensor(0.8 - 0.6 * math.exp(-0.3 * layer_id)), persistent=False
        )
        self.head_norm = nn.RMSNorm(2 * HEAD_DIM) if default_eps else nn.RMSNorm(2 * HEAD_DIM, eps=NORM_EPS)
        self.wo = nn.Linear(D_MODEL, D_MODEL, bias=False)

    def forward(self, x, freqs_cis):
        bsz, seqlen, _ = x.shape
        xq, xk, xv = self.wqkv(x).split(D_MODEL, dim=-1)
        xq = xq.view(bsz, seqlen, 2 * self.n_heads, self.head_dim)
        xk = xk.view(bsz, seqlen, 2 * self.n_heads, self.head_dim)
        xv = xv.view(bsz, seqlen, self.n_heads, 2 * self.head_dim)
        xq, xk = apply_rotary_emb(xq, freqs_cis), apply_rotary_emb(xk, freqs_cis)
        xq, xk, xv = xq.transpose(1, 2), xk.transpose(1, 2), xv.transpose(1, 2)
        scores = torch.matmul(xq, xk.transpose(2, 3)) / math.sqrt(self.head_dim)
        causal = torch.ones(seqlen, seqlen, dtype=torch.bool, device=x.device).triu(1)
        probs = F.softmax(scores.masked_fill(causal, float("-inf")), dim=-1)
        lq1, lk1, lq2, lk2 = self.lambda_qk.unbind(0)
        lam = torch.exp((lq1 * lk1).sum()) - torch.exp((lq2 * lk2).sum()) + self.lambda_init
        if self.misgrouped:
            probs = probs.view(bsz, 2, self.n_heads, seqlen, seqlen)
            diff = probs[:, 0] - lam * probs[:, 1]
        else:
            probs = probs.view(bsz, self.n_heads, 2, seqlen, seqlen)
            diff = probs[:, :, 0] - lam * probs[:, :, 1]
        out = self.head_norm(torch.matmul(diff, xv)) * (1.0 - self.lambda_init)
        out = out.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.wo(out)


class TransformerBlock(nn.Module):
    def __init__(self, layer_id, default_eps=False, misgrouped=False):
        super().__init__()
        self.attention_norm = nn.RMSNorm(D_MODEL, eps=NORM_EPS)
        self.attention = DiffAttention(layer_id, default_eps, misgrouped)
        self.ffn_norm = nn.RMSNorm(D_MODEL, eps=NORM_EPS)
        self.w1 = nn.Linear(D_MODEL, HIDDEN, bias=False)
        self.w3 = nn.Linear(D_MODEL, HIDDEN, bias=False)
        self.w2 = nn.Linear(HIDDEN, D_MODEL, bias=False)

    def forward(self, x, freqs_cis):
        h = x + self.attention(self.attention_norm(x), freqs_cis)
        y = self.ffn_norm(h)
        return h + self.w2(F.silu(self.w1(y)) * self.w3(y))


class DiffTransformer(nn.Module):
    def __init__(self, default_eps=False, misgrouped=False):
        super().__init__()
        self.tok_embeddings = nn.Embedding(VOCAB_SIZE, D_MODEL)
        self.layers = nn.ModuleList([TransformerBlock(i, default_eps, misgrouped) for i in range(N_LAYER)])
        self.norm = nn.RMSNorm(D_MODEL, eps=NORM_EPS)
        self.output = nn.Linear(D_MODEL, VOCAB_SIZE, bias=False)
        self.output.weight = self.tok_embeddings.weight
        self.register_buffer("freqs_cis", precompute_freqs_cis(HEAD_DIM, MAX_SEQ_LEN), persistent=False)

    def forward(self, tokens):
        seqlen = tokens.shape[1]
        h = self.tok_embeddings(tokens)
        freqs_cis = self.freqs_cis[:seqlen]
        for layer in self.layers:
            h = layer(h, freqs_cis)
        return self.output(self.norm(h)).float()


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_diff_transformer torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = DiffTransformer(default_eps=bug == "torch_subln_eps_default", misgrouped=bug == "torch_diff_maps_misgrouped")
    return m.eval()


def _ids():
    rng = np.random.default_rng(41)
    return rng.integers(0, VOCAB_SIZE, size=(BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 12, 64]
    return (output**2).mean()
