"""Hand-written port, torch side: a tiny Mistral-style decoder with sliding-window attention (written by "person B").

The same math as port_mistral_swa_paddle.py, re-implemented by hand in the style of the
mistral-src reference implementation (one_file_ref.py). Sizes: vocab 64, dim 32, 4 heads, 2
kv heads, head_dim 8, hidden_dim 48, 2 layers, sequence length 10, batch 2, sliding_window 4
(a query sees itself and the 3 previous tokens), rope theta 10000, norm_eps 1e-5.

Torch idioms on this side:
- root `Transformer` registers `tok_embeddings`, `layers` (ModuleList of `TransformerBlock`),
  `norm`, `output` (nn.Linear(32, 64, bias=False)). `freqs_cis` (complex64 [64, 4]) is a plain
  attribute precomputed in __init__ (not a buffer, as in the reference). The sliding-window mask
  is built ONCE in the root forward as an ADDITIVE FLOAT mask:
  torch.log(torch.triu(torch.tril(ones), diagonal=-(sliding_window - 1))) (0 inside the band,
  -inf outside), and passed with freqs_cis positionally to every block and attention.
- `TransformerBlock` registers `attention`, `feed_forward`, `attention_norm`, `ffn_norm`:
  h = x + attention(attention_norm(x), freqs_cis, mask); out = h + feed_forward(ffn_norm(h)).
- `RMSNorm`: _norm(x.float()).type_as(x) * weight, _norm = x * rsqrt(mean(x^2) + eps).
- `Attention`: `wq` (32->32), `wk` (32->16), `wv` (32->16), `wo` (32->32), no biases. Rotary
  in the COMPLEX, INTERLEAVED-PAIR convention (view_as_complex of the last axis reshaped to
  [..., 4, 2], times freqs_cis), inline; keys / values shared with torch.repeat_interleave
  (dim 2 of [B, L, H_kv, D]); scores + mask, softmax in float32.
  Because the rotary pairs are (2i, 2i + 1) here and (i, i + 4) on the paddle (rotate-half)
  side, the rows of wq / wk are the paddle q / k columns PERMUTED within each head (the HF
  conversion "permute", undone): torch row h*8 + 2i + a = paddle column h*8 + 4a + i.
- `FeedForward`: `w1`, `w2`, `w3`, F.silu inline: w2(silu(w1(x)) * w3(x)).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_window_plus_one      -> the band is built with torch.triu(..., diagonal=-sliding_window)
                                (the reference code's literal line) instead of
                                -(sliding_window - 1): every query at position >= 4 also sees
                                the token 4 steps back (5 tokens instead of 4)
  torch_residual_from_normed -> TransformerBlock overwrites x with attention_norm(x) and adds the
                                attention output to the NORMED x instead of the block input
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

DIM, N_LAYERS, N_HEADS, N_KV_HEADS, HIDDEN_DIM, VOCAB_SIZE = 32, 2, 4, 2, 48, 64
HEAD_DIM = DIM // N_HEADS
SLIDING_WINDOW, ROPE_THETA, NORM_EPS, MAX_SEQ = 4, 10000.0, 1e-5, 64
BATCH, SEQ = 2, 10
OWN_BUGS = {"torch_window_plus_one", "torch_residual_from_normed"}
OTHER_BUGS = {"paddle_rope_bf16_cache", "paddle_mlp_act_gelu"}


def precompute_freqs_cis(dim, end, theta=ROPE_THETA):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    return torch.polar(torch.ones_like(freqs), freqs)  # complex64


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = freqs_cis[:, None, :]  # [L, 1, D/2] against [B, L, H, D/2]
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=NORM_EPS):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(x.float()).type_as(x)
        return output * self.weight


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.n_heads, self.n_kv_heads = N_HEADS, N_KV_HEADS
        self.repeats = N_HEADS // N_KV_HEADS
        self.scale = HEAD_DIM**-0.5
        self.wq = nn.Linear(DIM, N_HEADS * HEAD_DIM, bias=False)
        self.wk = nn.Linear(DIM, N_KV_HEADS * HEAD_DIM, bias=False)
        self.wv = nn.Linear(DIM, N_KV_HEADS * HEAD_DIM, bias=False)
        self.wo = nn.Linear(N_HEADS * HEAD_DIM, DIM, bias=False)

    def forward(self, x, freqs_cis, mask):
        bsz, seqlen, _ = x.shape
        xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)
        xq = xq.view(bsz, seqlen, self.n_heads, HEAD_DIM)
        xk = xk.view(bsz, seqlen, self.n_kv_heads, HEAD_DIM)
        xv = xv.view(bsz, seqlen, self.n_kv_heads, HEAD_DIM)
        xq, xk = apply_rotary_emb(xq, xk, freqs_cis=freqs_cis)
        key = torch.repeat_interleave(xk, repeats=self.repeats, dim=2)
        value = torch.repeat_interleave(xv, repeats=self.repeats, dim=2)
        xq, key, value = xq.transpose(1, 2), key.transpose(1, 2), value.transpose(1, 2)
        scores = torch.matmul(xq, key.transpose(2, 3)) * self.scale
        scores = scores + mask[None, None, :, :]
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        output = torch.matmul(scores, value)  # (bs, n_heads, seqlen, head_dim)
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.wo(output)


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(DIM, HIDDEN_DIM, bias=False)
        self.w2 = nn.Linear(HIDDEN_DIM, DIM, bias=False)
        self.w3 = nn.Linear(DIM, HIDDEN_DIM, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Module):
    def __init__(self, residual_from_normed=False):
        super().__init__()
        self.residual_from_normed = residual_from_normed
        self.attention = Attention()
        self.feed_forward = FeedForward()
        self.attention_norm = RMSNorm(DIM, eps=NORM_EPS)
        self.ffn_norm = RMSNorm(DIM, eps=NORM_EPS)

    def forward(self, x, freqs_cis, mask):
        if self.residual_from_normed:
            x = self.attention_norm(x)
            h = x + self.attention(x, freqs_cis, mask)
        else:
            r = self.attention(self.attention_norm(x), freqs_cis, mask)
            h = x + r
        r = self.feed_forward(self.ffn_norm(h))
        return h + r


class Transformer(nn.Module):
    def __init__(self, mask_diagonal=-(SLIDING_WINDOW - 1), residual_from_normed=False):
        super().__init__()
        self.mask_diagonal = mask_diagonal
        self.tok_embeddings = nn.Embedding(VOCAB_SIZE, DIM)
        self.layers = nn.ModuleList([TransformerBlock(residual_from_normed) for _ in range(N_LAYERS)])
        self.norm = RMSNorm(DIM, eps=NORM_EPS)
        self.output = nn.Linear(DIM, VOCAB_SIZE, bias=False)
        self.freqs_cis = precompute_freqs_cis(HEAD_DIM, MAX_SEQ)  # plain attribute, not a buffer

    def forward(self, input_ids):
        seqlen = input_ids.shape[1]
        h = self.tok_embeddings(input_ids)
        freqs_cis = self.freqs_cis[:seqlen]
        mask = torch.full((seqlen, seqlen), fill_value=1.0, dtype=h.dtype)
        mask = torch.tril(mask, diagonal=0)
        mask = torch.triu(mask, diagonal=self.mask_diagonal)  # keep i - j <= sliding_window - 1
        mask = torch.log(mask)  # 0 in the band, -inf outside
        for layer in self.layers:
            h = layer(h, freqs_cis, mask)
        return self.output(self.norm(h)).float()


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_mistral_swa torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    diag = -SLIDING_WINDOW if bug == "torch_window_plus_one" else -(SLIDING_WINDOW - 1)
    m = Transformer(mask_diagonal=diag, residual_from_normed=bug == "torch_residual_from_normed")
    with torch.no_grad():
        gen = torch.Generator().manual_seed(11)
        for mod in m.modules():
            if isinstance(mod, RMSNorm):
                mod.weight.copy_(torch.empty(DIM).uniform_(0.7, 1.3, generator=gen))
    return m.eval()


def _ids():
    rng = np.random.default_rng(31)
    return rng.integers(0, VOCAB_SIZE, (BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 10, 64]
    return (output**2).mean()
