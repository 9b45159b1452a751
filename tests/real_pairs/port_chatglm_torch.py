"""Hand-written port, torch side: a tiny ChatGLM2-style decoder LM (written by "person B").

The same math as port_chatglm_paddle.py, re-implemented by hand, batch-first: vocab 80, hidden 64,
4 query heads of 16 sharing 2 key / value heads (grouped-query attention, query heads 0, 1 read
kv head 0 and heads 2, 3 read kv head 1), SwiGLU FFN 128, 2 layers, pre-norm RMSNorm (eps 1e-5)
plus a final norm, untied lm_head. Partial rotary on the first 8 of 16 dimensions of each head,
pairs (2i, 2i+1) rotated by theta_i = pos / 10000^(2i / 8); dimensions 8..15 pass through.

Input: positional `input_ids` [2, 12] int64 (numpy rng seed 48). Output: logits [2, 12, 80].

Torch idioms on this side:
- root `GLMForCausalLM` registers `embed_tokens` (nn.Embedding), `layers` (ModuleList of
  `GLMDecoderLayer`, iterated), `norm` (torch nn.RMSNorm) and `lm_head` Linear(64, 80, no bias);
  all activations are [batch, seq, hidden].
- `GLMDecoderLayer`: `ln_attn` (nn.RMSNorm), `attn`, `ln_mlp` (nn.RMSNorm), `mlp`.
- `GLMAttention` registers `rotary_emb` FIRST, then SEPARATE `q_proj` (64 -> 64), `k_proj`
  (64 -> 32), `v_proj` (64 -> 32), all with bias, then `o_proj` (no bias). Heads go to
  [batch, heads, seq, 16]; `rotary_emb` is called once with (q, k) and returns both rotated;
  attention is F.scaled_dot_product_attention(is_causal=True, enable_gqa=True) (no repeat of
  the kv heads in user code).
- `PartialRotaryEmbedding` (GPT-J style): non-persistent `cos_cached` / `sin_cached` buffers
  [32, 8] built in __init__ with each frequency repeated for its pair (repeat_interleave(2)),
  and `rotate_every_two` (stack(-x[1::2], x[0::2]) then flatten) on the rotary slice.
- `GLMMLP`: `w1` (gate, 64 -> 128), `w3` (up, 64 -> 128), `act_fn` (nn.SiLU module), `w2`
  (128 -> 64), no biases: w2(act_fn(w1(x)) * w3(x)).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_rope_cat_freqs   -> the cos / sin buffers are built Llama-style as cat((freqs, freqs))
                            instead of repeat_interleave(2), so pair (2i, 2i+1) is rotated with
                            two different frequencies (dimension j gets frequency j mod 4)
  torch_residual_post_ln -> the decoder layer adds the attention output to the NORMED input
                            (as with apply_residual_connection_post_layernorm=True) instead of
                            to the layer input
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB_SIZE, D_MODEL, N_Q_HEADS, N_KV_HEADS, D_HEAD, D_FF, N_LAYER = 80, 64, 4, 2, 16, 128, 2
ROPE_DIM, ROPE_BASE, MAX_POS = 8, 10000.0, 32
NORM_EPS = 1e-5
BATCH, SEQ = 2, 12
OWN_BUGS = {"torch_rope_cat_freqs", "torch_residual_post_ln"}
OTHER_BUGS = {"paddle_rope_cache_bf16", "paddle_kv_tile"}


def rotate_every_two(x):
    x1 = x[..., ::2]
    x2 = x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


class PartialRotaryEmbedding(nn.Module):
    def __init__(self, rotary_dim, max_positions, base, cat_freqs=False):
        super().__init__()
        self.rotary_dim = rotary_dim
        inv_freq = 1.0 / (base ** (torch.arange(0, rotary_dim, 2, dtype=torch.float32) / rotary_dim))
        t = torch.arange(max_positions, dtype=torch.float32)
        freqs = torch.einsum("i,j->ij", t, inv_freq)  # [P, rotary_dim / 2]
        if cat_freqs:
            emb = torch.cat((freqs, freqs), dim=-1)
        else:
            emb = freqs.repeat_interleave(2, dim=-1)  # [P, rotary_dim]: f0 f0 f1 f1 ...
        self.register_buffer("cos_cached", emb.cos(), persistent=False)
        self.register_buffer("sin_cached", emb.sin(), persistent=False)

    def forward(self, q, k):
        # q: [B, Hq, T, D], k: [B, Hkv, T, D]
        seq_len = q.shape[-2]
        cos = self.cos_cached[:seq_len]
        sin = self.sin_cached[:seq_len]
        r = self.rotary_dim
        q_rot, q_pass = q[..., :r], q[..., r:]
        k_rot, k_pass = k[..., :r], k[..., r:]
        q_rot = q_rot * cos + rotate_every_two(q_rot) * sin
        k_rot = k_rot * cos + rotate_every_two(k_rot) * sin
        return torch.cat((q_rot, q_pass), dim=-1), torch.cat((k_rot, k_pass), dim=-1)


class GLMAttention(nn.Module):
    def __init__(self, cat_freqs=False):
        super().__init__()
        self.rotary_emb = PartialRotaryEmbedding(ROPE_DIM, MAX_POS, ROPE_BASE, cat_freqs)
        self.q_proj = nn.Linear(D_MODEL, N_Q_HEADS * D_HEAD, bias=True)
        self.k_proj = nn.Linear(D_MODEL, N_KV_HEADS * D_HEAD, bias=True)
        self.v_proj = nn.Linear(D_MODEL, N_KV_HEADS * D_HEAD, bias=True)
        self.o_proj = nn.Linear(N_Q_HEADS * D_HEAD, D_MODEL, bias=False)

    def forward(self, x):
        bsz, tgt_len, _ = x.shape
        q = self.q_proj(x).view(bsz, tgt_len, N_Q_HEADS, D_HEAD).transpose(1, 2)
        k = self.k_proj(x).view(bsz, tgt_len, N_KV_HEADS, D_HEAD).transpose(1, 2)
        v = self.v_proj(x).view(bsz, tgt_len, N_KV_HEADS, D_HEAD).transpose(1, 2)
        q, k = self.rotary_emb(q, k)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        out = out.transpose(1, 2).reshape(bsz, tgt_len, N_Q_HEADS * D_HEAD)
        return self.o_proj(out)


class GLMMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(D_MODEL, D_FF, bias=False)
        self.w3 = nn.Linear(D_MODEL, D_FF, bias=False)
        self.act_fn = nn.SiLU()
        self.w2 = nn.Linear(D_FF, D_MODEL, bias=False)

    def forward(self, x):
        return self.w2(self.act_fn(self.w1(x)) * self.w3(x))


class GLMDecoderLayer(nn.Module):
    def __init__(self, cat_freqs=False, residual_post_ln=False):
        super().__init__()
        self.residual_post_ln = residual_post_ln
        self.ln_attn = nn.RMSNorm(D_MODEL, eps=NORM_EPS)
        self.attn = GLMAttention(cat_freqs)
        self.ln_mlp = nn.RMSNorm(D_MODEL, eps=NORM_EPS)
        self.mlp = GLMMLP()

    def forward(self, x):
        h = self.ln_attn(x)
        residual = h if self.residual_post_ln else x
        x = residual + self.attn(h)
        return x + self.mlp(self.ln_mlp(x))


class GLMForCausalLM(nn.Module):
    def __init__(self, cat_freqs=False, residual_post_ln=False):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB_SIZE, D_MODEL)
        self.layers = nn.ModuleList([GLMDecoderLayer(cat_freqs, residual_post_ln) for _ in range(N_LAYER)])
        self.norm = nn.RMSNorm(D_MODEL, eps=NORM_EPS)
        self.lm_head = nn.Linear(D_MODEL, VOCAB_SIZE, bias=False)

    def forward(self, input_ids):
        x = self.embed_tokens(input_ids)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_chatglm torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = GLMForCausalLM(cat_freqs=bug == "torch_rope_cat_freqs", residual_post_ln=bug == "torch_residual_post_ln")
    return m.eval()


def _ids():
    rng = np.random.default_rng(48)
    return rng.integers(0, VOCAB_SIZE, size=(BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 12, 80]
    return (output**2).mean()
