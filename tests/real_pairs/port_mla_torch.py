"""Hand-written port, torch side: a tiny DeepSeek-V2-style decoder LM with multi-head latent attention (written by "person B").

The same math as port_mla_paddle.py, re-implemented by hand from the DeepSeek-V2 paper's
notation: vocab 64, hidden 32, 4 heads, 2 layers, SwiGLU intermediate 64, input_ids [2, 10]
(positional), logits [2, 10, 64].
  c_q  = q_norm(w_dq(x)),  q_C = w_uq(c_q) (4 x 8 nope),  q_R = rope(w_qr(c_q)) (4 x 4 rope)
  c_kv = kv_norm(w_dkv(x)), [k_C | v] = w_ukv(c_kv) (per head 8 | 8),  k_R = rope(w_kr(x)) (4,
  shared by the heads)
  attention over q = [q_C | q_R], k = [k_C | k_R], scale 1 / sqrt(12), causal; w_o.
No Linear has a bias; RMSNorm eps 1e-6; untied `output` head.

Torch idioms on this side:
- root `MLATransformer` registers `rotary` FIRST (a `RotaryEmbedding` module whose cos / sin
  tables are non-persistent buffers [32, 4]; it is called ONCE per forward at the root and its
  cos / sin are passed to every block), then `tok_embeddings`, `layers` (ModuleList of
  `TransformerBlock`), `norm` (nn.RMSNorm), `output` Linear(32, 64).
- `TransformerBlock`: `attn_norm`, `attn`, `ffn_norm`, `ffn`; forward(x, cos, sin).
- `MultiHeadLatentAttention` registers the kv path first: `w_dkv` Linear(32, 16) (latent only),
  `w_kr` Linear(32, 4) (the decoupled rope key, a SEPARATE Linear), `kv_norm` nn.RMSNorm(16),
  `w_ukv` Linear(16, 64) (per head [k 8 | v 8]), then the q path: `w_dq` Linear(32, 16),
  `q_norm` nn.RMSNorm(16), `w_uq` Linear(16, 32) (nope part of q, head-major) and `w_qr`
  Linear(16, 16) (rope part of q, head-major, a SEPARATE Linear), then `w_o` Linear(32, 32).
- ROPE IS HALF-SPLIT (rotate_half, table cat(freqs, freqs)): rope dims (0, 2) rotate with
  frequency 0 and (1, 3) with frequency 1. The rope rows of w_qr / w_kr are therefore the
  paddle columns permuted [0, 2, 1, 3] (see port_mla_hook.py); the q.k products are unchanged.
- attention is F.scaled_dot_product_attention(is_causal=True, scale=1 / sqrt(12)).
- `FeedForward`: w1 (gate), w2 (down), w3 (up), Meta-LLaMA names.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_kv_split_swapped -> the per-head [k | v] output of w_ukv is unpacked as (v, k): the
                            value vectors are used as keys and vice versa
  torch_silu_of_product  -> FeedForward computes w2(silu(w1(x) * w3(x))) instead of
                            w2(silu(w1(x)) * w3(x)) (a misplaced parenthesis)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB_SIZE, DIM, N_HEADS, N_LAYERS, FFN_DIM = 64, 32, 4, 2, 64
Q_LORA_RANK, KV_LORA_RANK, QK_NOPE_DIM, QK_ROPE_DIM, V_HEAD_DIM = 16, 16, 8, 4, 8
MAX_SEQ_LEN, ROPE_BASE, NORM_EPS = 32, 10000.0, 1e-6
BATCH, SEQ = 2, 10
OWN_BUGS = {"torch_kv_split_swapped", "torch_silu_of_product"}
OTHER_BUGS = {"paddle_rope_table_bf16", "paddle_residual_from_normed"}


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, max_seq_len=MAX_SEQ_LEN, base=ROPE_BASE):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
        t = torch.arange(max_seq_len, dtype=torch.float32)
        freqs = torch.outer(t, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos(), persistent=False)
        self.register_buffer("sin_cached", emb.sin(), persistent=False)

    def forward(self, x):
        seq_len = x.shape[1]
        return self.cos_cached[:seq_len], self.sin_cached[:seq_len]


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(x, cos, sin):
    return x * cos + rotate_half(x) * sin


class MultiHeadLatentAttention(nn.Module):
    def __init__(self, kv_swapped=False):
        super().__init__()
        self.kv_swapped = kv_swapped
        self.qk_head_dim = QK_NOPE_DIM + QK_ROPE_DIM
        self.scale = self.qk_head_dim ** -0.5
        self.w_dkv = nn.Linear(DIM, KV_LORA_RANK, bias=False)
        self.w_kr = nn.Linear(DIM, QK_ROPE_DIM, bias=False)
        self.kv_norm = nn.RMSNorm(KV_LORA_RANK, eps=NORM_EPS)
        self.w_ukv = nn.Linear(KV_LORA_RANK, N_HEADS * (QK_NOPE_DIM + V_HEAD_DIM), bias=False)
        self.w_dq = nn.Linear(DIM, Q_LORA_RANK, bias=False)
        self.q_norm = nn.RMSNorm(Q_LORA_RANK, eps=NORM_EPS)
        self.w_uq = nn.Linear(Q_LORA_RANK, N_HEADS * QK_NOPE_DIM, bias=False)
        self.w_qr = nn.Linear(Q_LORA_RANK, N_HEADS * QK_ROPE_DIM, bias=False)
        self.w_o = nn.Linear(N_HEADS * V_HEAD_DIM, DIM, bias=False)

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        c_kv = self.kv_norm(self.w_dkv(x))
        kv = self.w_ukv(c_kv).view(b, s, N_HEADS, QK_NOPE_DIM + V_HEAD_DIM).transpose(1, 2)
        if self.kv_swapped:
            v, k_c = kv.split([V_HEAD_DIM, QK_NOPE_DIM], dim=-1)
        else:
            k_c, v = kv.split([QK_NOPE_DIM, V_HEAD_DIM], dim=-1)
        k_r = apply_rotary(self.w_kr(x).unsqueeze(1), cos, sin)  # [b, 1, s, rope]

        c_q = self.q_norm(self.w_dq(x))
        q_c = self.w_uq(c_q).view(b, s, N_HEADS, QK_NOPE_DIM).transpose(1, 2)
        q_r = self.w_qr(c_q).view(b, s, N_HEADS, QK_ROPE_DIM).transpose(1, 2)
        q_r = apply_rotary(q_r, cos, sin)

        q = torch.cat((q_c, q_r), dim=-1)
        k = torch.cat((k_c, k_r.expand(b, N_HEADS, s, QK_ROPE_DIM)), dim=-1)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=self.scale)
        return self.w_o(o.transpose(1, 2).reshape(b, s, N_HEADS * V_HEAD_DIM))


class FeedForward(nn.Module):
    def __init__(self, silu_of_product=False):
        super().__init__()
        self.silu_of_product = silu_of_product
        self.w1 = nn.Linear(DIM, FFN_DIM, bias=False)
        self.w2 = nn.Linear(FFN_DIM, DIM, bias=False)
        self.w3 = nn.Linear(DIM, FFN_DIM, bias=False)

    def forward(self, x):
        if self.silu_of_product:
            return self.w2(F.silu(self.w1(x) * self.w3(x)))
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Module):
    def __init__(self, kv_swapped=False, silu_of_product=False):
        super().__init__()
        self.attn_norm = nn.RMSNorm(DIM, eps=NORM_EPS)
        self.attn = MultiHeadLatentAttention(kv_swapped)
        self.ffn_norm = nn.RMSNorm(DIM, eps=NORM_EPS)
        self.ffn = FeedForward(silu_of_product)

    def forward(self, x, cos, sin):
        x = x + self.attn(self.attn_norm(x), cos, sin)
        return x + self.ffn(self.ffn_norm(x))


class MLATransformer(nn.Module):
    def __init__(self, kv_swapped=False, silu_of_product=False):
        super().__init__()
        self.rotary = RotaryEmbedding(QK_ROPE_DIM)
        self.tok_embeddings = nn.Embedding(VOCAB_SIZE, DIM)
        self.layers = nn.ModuleList([TransformerBlock(kv_swapped, silu_of_product) for _ in range(N_LAYERS)])
        self.norm = nn.RMSNorm(DIM, eps=NORM_EPS)
        self.output = nn.Linear(DIM, VOCAB_SIZE, bias=False)

    def forward(self, tokens):
        h = self.tok_embeddings(tokens)
        cos, sin = self.rotary(h)
        for layer in self.layers:
            h = layer(h, cos, sin)
        return self.output(self.norm(h))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_mla torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = MLATransformer(kv_swapped=bug == "torch_kv_split_swapped",
                       silu_of_product=bug == "torch_silu_of_product")
    return m.eval()


def _ids():
    rng = np.random.default_rng(23)
    return rng.integers(0, VOCAB_SIZE, (BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 10, 64]
    return (output**2).mean()
