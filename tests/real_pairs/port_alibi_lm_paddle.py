"""Hand-written port, paddle side: a tiny decoder-only LM with ALiBi attention bias (written by "person A").

Sizes: vocab 64, width 32, 4 heads of 8, SwiGLU hidden 64, 2 layers, sequence length 12, batch 2.
No position embeddings at all: positions enter only through the ALiBi bias
slope_h * (j - i) added to the scaled q.k scores of head h before the causal softmax, with the
slopes of the ALiBi paper for 4 heads, 2^(-8 h / 4) for h = 1..4 = 1/4, 1/16, 1/64, 1/256.
RMSNorm eps 1e-5 (pre-norm residual blocks and a final norm). The LM head is TIED to the token
embedding: this side has no head module, the logits are
`matmul(h, embed_tokens.weight, transpose_y=True)` inline in the root forward.

Paddle idioms on this side:
- root `AlibiLM`: `embed_tokens` (nn.Embedding 64x32, Normal(0, 0.1)), `layers` = LayerList of
  `DecoderLayer`, `norm` (RMSNorm).
- `DecoderLayer` registers `self_attn` and `mlp` BEFORE `input_layernorm` and
  `post_attention_layernorm` (the norms are called first): x + attn(ln1(x)), then x + mlp(ln2(x)).
- `RMSNorm` is hand-written: create_parameter weight, x / sqrt(mean(x^2) + eps) * w.
- `AlibiAttention`: ONE fused `qkv_proj` Linear(32, 96, no bias) whose 96 output columns are laid
  out HEAD BY HEAD, [h0: q k v][h1: q k v]... (8 columns each), so the output is reshaped to
  [B, L, heads, 3, 8] and unbound on axis 3; the slopes are computed inline in the forward from
  a module-level helper (no buffer); the causal mask is paddle.triu(ones, 1) used with
  paddle.where; F.softmax; `o_proj` Linear(32, 32, no bias).
- `GatedMLP`: separate `gate_proj` / `up_proj` Linear(32, 64, no bias), F.silu inline,
  `down_proj` Linear(64, 32, no bias).

The torch side (port_alibi_lm_torch.py) was written independently: separate q / k / v Linears,
slopes and a causal tril mask as buffers, one fused gate|up Linear, torch's nn.RMSNorm and its
own (untied) lm_head.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_slopes_reversed   -> the slope list is built in reversed head order (head 0 gets 1/256,
                              head 3 gets 1/4), in the helper used by every attention layer
  paddle_rmsnorm_eps_outside -> RMSNorm divides by (sqrt(mean(x^2)) + eps) instead of
                              sqrt(mean(x^2) + eps) (precision-level)
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, WIDTH, HEADS, HEAD_DIM, HIDDEN, LAYERS = 64, 32, 4, 8, 64, 2
EPS = 1e-5
BATCH, SEQ = 2, 12
OWN_BUGS = {"paddle_slopes_reversed", "paddle_rmsnorm_eps_outside"}
OTHER_BUGS = {"torch_causal_off_by_one", "torch_swiglu_swapped"}


def alibi_slopes(n_heads, reverse=False):
    """ALiBi slopes for a power-of-two head count: 2^(-8/n), 2^(-16/n), ..."""
    start = 2.0 ** (-8.0 / n_heads)
    slopes = [start ** (i + 1) for i in range(n_heads)]
    if reverse:
        slopes = slopes[::-1]
    return slopes


class RMSNorm(nn.Layer):
    def __init__(self, hidden_size, eps=EPS, eps_outside=False):
        super().__init__()
        self.variance_epsilon = eps
        self.eps_outside = eps_outside
        self.weight = self.create_parameter([hidden_size], default_initializer=nn.initializer.Normal(1.0, 0.1))

    def forward(self, hidden_states):
        ms = hidden_states.pow(2).mean(-1, keepdim=True)
        if self.eps_outside:
            denom = paddle.sqrt(ms) + self.variance_epsilon
        else:
            denom = paddle.sqrt(ms + self.variance_epsilon)
        return hidden_states / denom * self.weight


class AlibiAttention(nn.Layer):
    def __init__(self, reverse_slopes=False):
        super().__init__()
        self.reverse_slopes = reverse_slopes
        self.qkv_proj = nn.Linear(WIDTH, 3 * WIDTH, bias_attr=False)  # columns [h: q k v] per head
        self.o_proj = nn.Linear(WIDTH, WIDTH, bias_attr=False)

    def forward(self, hidden_states):
        bsz, seq_len, _ = hidden_states.shape
        qkv = self.qkv_proj(hidden_states).reshape([bsz, seq_len, HEADS, 3, HEAD_DIM])
        q, k, v = paddle.unbind(qkv, axis=3)  # each [B, L, H, D]
        q, k, v = (t.transpose([0, 2, 1, 3]) for t in (q, k, v))  # [B, H, L, D]
        scores = paddle.matmul(q, k, transpose_y=True) / math.sqrt(HEAD_DIM)
        slopes = paddle.to_tensor(alibi_slopes(HEADS, self.reverse_slopes), dtype="float32")
        pos = paddle.arange(seq_len, dtype="float32")
        distance = pos.unsqueeze(0) - pos.unsqueeze(1)  # [i, j] = j - i (<= 0 where allowed)
        scores = scores + slopes.reshape([HEADS, 1, 1]) * distance
        future = paddle.triu(paddle.ones([seq_len, seq_len], dtype="float32"), diagonal=1).astype("bool")
        scores = paddle.where(future, paddle.full_like(scores, float("-inf")), scores)
        probs = F.softmax(scores, axis=-1)
        out = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([bsz, seq_len, WIDTH])
        return self.o_proj(out)


class GatedMLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(WIDTH, HIDDEN, bias_attr=False)
        self.up_proj = nn.Linear(WIDTH, HIDDEN, bias_attr=False)
        self.down_proj = nn.Linear(HIDDEN, WIDTH, bias_attr=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Layer):
    def __init__(self, reverse_slopes=False, eps_outside=False):
        super().__init__()
        self.self_attn = AlibiAttention(reverse_slopes)
        self.mlp = GatedMLP()
        self.input_layernorm = RMSNorm(WIDTH, eps_outside=eps_outside)
        self.post_attention_layernorm = RMSNorm(WIDTH, eps_outside=eps_outside)

    def forward(self, hidden_states):
        hidden_states = hidden_states + self.self_attn(self.input_layernorm(hidden_states))
        return hidden_states + self.mlp(self.post_attention_layernorm(hidden_states))


class AlibiLM(nn.Layer):
    def __init__(self, reverse_slopes=False, eps_outside=False):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, WIDTH, weight_attr=nn.initializer.Normal(0.0, 0.1))
        self.layers = nn.LayerList([DecoderLayer(reverse_slopes, eps_outside) for _ in range(LAYERS)])
        self.norm = RMSNorm(WIDTH, eps_outside=eps_outside)

    def forward(self, input_ids):
        h = self.embed_tokens(input_ids)
        for layer in self.layers:
            h = layer(h)
        h = self.norm(h)
        return paddle.matmul(h, self.embed_tokens.weight, transpose_y=True)  # tied head


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_alibi_lm paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = AlibiLM(reverse_slopes=bug == "paddle_slopes_reversed", eps_outside=bug == "paddle_rmsnorm_eps_outside")
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(21)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 12, 64]
    return (output**2).mean()
