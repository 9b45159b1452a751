"""Hand-written port, torch side: a tiny Mistral-style decoder LM (written by "person B").

The same math as port_gqa_paddle.py, written in the style of the mistral-src one-file reference
model. Sizes: vocab 80, dim 32, 4 query heads, 2 kv heads, head_dim 8, hidden_dim 64, 2 layers,
norm_eps 1e-5, rope_theta 1e6, sliding_window 4, sequence length 12, batch 2, no biases.

Torch idioms on this side:
- root `Transformer`: `tok_embeddings`, `layers` (ModuleList of `TransformerBlock`), `norm`
  (torch's nn.RMSNorm), and `output` nn.Linear(32, 80, bias=False) TIED to the embedding
  (`output.weight = tok_embeddings.weight`; named_parameters lists it once).
- `freqs_cis` is a plain attribute of the root (NOT a buffer): complex64 [64, 4] =
  polar(1, t * inv_freq) precomputed in __init__, sliced to the sequence length in forward and
  passed to every block together with the additive sliding-window mask, which is built in
  Transformer.forward the mistral-src way: full(1) -> tril(0) -> triu(-(window - 1)) -> log
  (0 where allowed, -inf elsewhere).
- `TransformerBlock` registers `attention`, `feed_forward`, `attention_norm`, `ffn_norm`.
- `Attention`: ONE packed `wqkv` Linear(32, 64): rows 0:32 q, 32:48 k, 48:64 v (GQA sizes); the
  output is split with torch.split. Rotary embeddings on INTERLEAVED pairs (dims 2i, 2i + 1 of a
  head form one complex number, torch.view_as_complex / view_as_real). The kv heads are repeated
  with expand + reshape (the repeat_interleave order: query head h uses kv head h // 2), then
  F.scaled_dot_product_attention with the additive float mask. `wo` Linear(32, 32).
- `FeedForward`: ONE packed `w13` Linear(32, 128) (rows 0:64 gate w1, 64:128 up w3), chunked,
  then w2(silu(w1 x) * w3 x), F.silu inline.

Because the rope layouts differ, wqkv's q and k rows are the paddle q_proj / k_proj columns
permuted within each head (torch row h*8 + 2i + c = paddle column h*8 + 4c + i); the q.k dot
product is unchanged, so v / wo need no permutation (port_gqa_hook.py).

PADIFF_BUG name of this side:
  swa_window_plus_one -> the mask is built with triu(diagonal=-sliding_window) instead of
                         triu(diagonal=-(sliding_window - 1)), so each token sees 5 tokens
                         (i-4..i) instead of 4 (the off-by-one of the first mistral-src release)
The paddle side's bug names are accepted and ignored; any other name raises ValueError.
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB, DIM, N_HEADS, N_KV_HEADS, HIDDEN_DIM, N_LAYERS = 80, 32, 4, 2, 64, 2
HEAD_DIM = DIM // N_HEADS
NORM_EPS, ROPE_THETA, SLIDING_WINDOW, MAX_SEQ = 1e-5, 1e6, 4, 64
BATCH, SEQ = 2, 12
OWN_BUGS = {"swa_window_plus_one"}
OTHER_BUGS = {"paddle_rope_theta_default", "paddle_rmsnorm_axis1"}


def precompute_freqs_cis(dim, end, theta):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device, dtype=torch.float32)
    freqs = torch.outer(t, freqs).float()
    return torch.polar(torch.ones_like(freqs), freqs)  # complex64


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = freqs_cis[:, None, :]  # [T, 1, dim / 2] against [B, T, H, dim / 2]
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def repeat_kv(x, n_rep):
    """[B, T, kv_heads, D] -> [B, T, kv_heads * n_rep, D], each kv head repeated n_rep times in place."""
    bs, slen, n_kv_heads, head_dim = x.shape
    if n_rep == 1:
        return x
    return x[:, :, :, None, :].expand(bs, slen, n_kv_heads, n_rep, head_dim).reshape(
        bs, slen, n_kv_heads * n_rep, head_dim)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.n_rep = N_HEADS // N_KV_HEADS
        self.wqkv = nn.Linear(DIM, (N_HEADS + 2 * N_KV_HEADS) * HEAD_DIM, bias=False)
        self.wo = nn.Linear(N_HEADS * HEAD_DIM, DIM, bias=False)

    def forward(self, x, freqs_cis, mask):
        bsz, seqlen, _ = x.shape
        xq, xk, xv = torch.split(self.wqkv(x), [N_HEADS * HEAD_DIM, N_KV_HEADS * HEAD_DIM,
                                                N_KV_HEADS * HEAD_DIM], dim=-1)
        xq = xq.view(bsz, seqlen, N_HEADS, HEAD_DIM)
        xk = xk.view(bsz, seqlen, N_KV_HEADS, HEAD_DIM)
        xv = xv.view(bsz, seqlen, N_KV_HEADS, HEAD_DIM)
        xq, xk = apply_rotary_emb(xq, xk, freqs_cis)
        keys = repeat_kv(xk, self.n_rep)
        values = repeat_kv(xv, self.n_rep)
        out = F.scaled_dot_product_attention(xq.transpose(1, 2), keys.transpose(1, 2),
                                             values.transpose(1, 2), attn_mask=mask)
        return self.wo(out.transpose(1, 2).reshape(bsz, seqlen, -1))


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.w13 = nn.Linear(DIM, 2 * HIDDEN_DIM, bias=False)
        self.w2 = nn.Linear(HIDDEN_DIM, DIM, bias=False)

    def forward(self, x):
        gate, up = self.w13(x).chunk(2, dim=-1)
        return self.w2(F.silu(gate) * up)


class TransformerBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = Attention()
        self.feed_forward = FeedForward()
        self.attention_norm = nn.RMSNorm(DIM, eps=NORM_EPS)
        self.ffn_norm = nn.RMSNorm(DIM, eps=NORM_EPS)

    def forward(self, x, freqs_cis, mask):
        h = x + self.attention(self.attention_norm(x), freqs_cis, mask)
        return h + self.feed_forward(self.ffn_norm(h))


class Transformer(nn.Module):
    def __init__(self, window_plus_one=False):
        super().__init__()
        self.window_plus_one = window_plus_one
        self.tok_embeddings = nn.Embedding(VOCAB, DIM)
        self.layers = nn.ModuleList([TransformerBlock() for _ in range(N_LAYERS)])
        self.norm = nn.RMSNorm(DIM, eps=NORM_EPS)
        self.output = nn.Linear(DIM, VOCAB, bias=False)
        self.output.weight = self.tok_embeddings.weight  # tied
        self.freqs_cis = precompute_freqs_cis(HEAD_DIM, MAX_SEQ, ROPE_THETA)

    def forward(self, input_ids):
        seqlen = input_ids.shape[1]
        h = self.tok_embeddings(input_ids)
        freqs_cis = self.freqs_cis[:seqlen].to(h.device)
        mask = torch.full((seqlen, seqlen), fill_value=1.0, device=h.device)
        mask = torch.tril(mask, diagonal=0)
        if self.window_plus_one:
            mask = torch.triu(mask, diagonal=-SLIDING_WINDOW)
        else:
            mask = torch.triu(mask, diagonal=-(SLIDING_WINDOW - 1))
        mask = torch.log(mask).to(h.dtype)
        for layer in self.layers:
            h = layer(h, freqs_cis, mask)
        return self.output(self.norm(h))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_gqa torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = Transformer(window_plus_one=bug == "swa_window_plus_one")
    return m.eval()


def _ids():
    rng = np.random.default_rng(17)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 12, 80]
    return (output**2).mean()
