"""Hand-written port, paddle side: a tiny InternLM2-style decoder-only LM (written by "person A").

Sizes: vocab 64, hidden 32, 4 query heads and 2 key/value heads of 8 (grouped-query attention,
2 query heads per key/value head), SwiGLU intermediate 64, 2 layers, sequence length 12, batch 2.
Rotary position embedding (rotate-half convention, theta 1e6, as InternLM2-7B), causal mask,
RMSNorm eps 1e-5 (pre-norm residual blocks and a final norm), UNTIED output head.

Paddle idioms on this side (a LLaMA-style paddle port with SEPARATE projections):
- root `InternLM2LM` registers `lm_head` (nn.Linear(32, 64, no bias)) FIRST, then
  `embed_tokens` (nn.Embedding 64x32, Normal(0, 0.05)), `layers` = LayerList of `DecoderLayer`,
  `norm` (RMSNorm). The causal mask is built once in the root forward as an additive float
  [L, L] tensor (0 / -inf from paddle.triu) and passed to every layer.
- `DecoderLayer`: `input_layernorm`, `self_attn`, `post_attention_layernorm`, `mlp` (call order).
- `RMSNorm` is hand-written (create_parameter weight): x / sqrt(mean(x^2) + eps) * w.
- `GQAttention`: SEPARATE `q_proj` Linear(32, 32), `k_proj` Linear(32, 16), `v_proj`
  Linear(32, 16) and `o_proj` Linear(32, 32), no biases. Rotary cos / sin are computed INLINE in
  the forward from a module-level helper (no module, no buffer); the key / value heads are
  shared with paddle.repeat_interleave on the head axis (q head h uses kv head h // 2);
  F.softmax.
- `SwiGLUMLP` registers `up_proj`, `gate_proj`, `down_proj` (Linear 32->64, 32->64, 64->32, no
  bias); the SiLU is F.silu inline: down(silu(gate(x)) * up(x)).
- model() gives the RMSNorm weights trained-looking values U(0.7, 1.3) (numpy seed 7).

The torch side (port_internlm2_torch.py) was written independently in the style of the official
InternLM2 code: ONE packed `wqkv` Linear laid out per key/value group, `wo`, a rotary module per
attention, `feed_forward` with `w1` / `w3` / `w2` and an activation module, `attention_norm` /
`ffn_norm`, a `model` sub-module and an `output` head.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_gqa_tile           -> the key / value heads are shared with paddle.tile instead of
                               repeat_interleave, so q head h reads kv head h % 2 instead of
                               h // 2 (heads 1 and 2 get the wrong key / value head)
  paddle_rmsnorm_default_eps -> RMSNorm is built with its class default epsilon 1e-6 instead of
                               the config's 1e-5, in every norm (precision-level)
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, HIDDEN, N_HEADS, N_KV_HEADS, HEAD_DIM, INTER, N_LAYERS = 64, 32, 4, 2, 8, 64, 2
ROPE_THETA, RMS_EPS = 1.0e6, 1e-5
BATCH, SEQ = 2, 12
OWN_BUGS = {"paddle_gqa_tile", "paddle_rmsnorm_default_eps"}
OTHER_BUGS = {"torch_wqkv_kv_swapped", "torch_rope_default_theta"}


def rope_cos_sin(seq_len, dim=HEAD_DIM, theta=ROPE_THETA):
    """cos / sin tables [seq_len, dim] of the rotate-half rotary embedding."""
    inv_freq = 1.0 / (theta ** (paddle.arange(0, dim, 2, dtype="float32") / dim))
    t = paddle.arange(seq_len, dtype="float32")
    freqs = paddle.outer(t, inv_freq)
    emb = paddle.concat([freqs, freqs], axis=-1)
    return paddle.cos(emb), paddle.sin(emb)


def rotate_half(x):
    half = x.shape[-1] // 2
    return paddle.concat([-x[..., half:], x[..., :half]], axis=-1)


class RMSNorm(nn.Layer):
    def __init__(self, hidden_size, epsilon=1e-6):
        super().__init__()
        self.epsilon = epsilon
        self.weight = self.create_parameter([hidden_size], default_initializer=nn.initializer.Constant(1.0))

    def forward(self, x):
        ms = paddle.mean(x * x, axis=-1, keepdim=True)
        return x / paddle.sqrt(ms + self.epsilon) * self.weight


class GQAttention(nn.Layer):
    def __init__(self, tile_kv=False):
        super().__init__()
        self.tile_kv = tile_kv
        self.q_proj = nn.Linear(HIDDEN, N_HEADS * HEAD_DIM, bias_attr=False)
        self.k_proj = nn.Linear(HIDDEN, N_KV_HEADS * HEAD_DIM, bias_attr=False)
        self.v_proj = nn.Linear(HIDDEN, N_KV_HEADS * HEAD_DIM, bias_attr=False)
        self.o_proj = nn.Linear(N_HEADS * HEAD_DIM, HIDDEN, bias_attr=False)

    def forward(self, x, attn_mask):
        bsz, seq_len, _ = x.shape
        q = self.q_proj(x).reshape([bsz, seq_len, N_HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])
        k = self.k_proj(x).reshape([bsz, seq_len, N_KV_HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])
        v = self.v_proj(x).reshape([bsz, seq_len, N_KV_HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])
        cos, sin = rope_cos_sin(seq_len)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        n_rep = N_HEADS // N_KV_HEADS
        if self.tile_kv:
            k = paddle.tile(k, [1, n_rep, 1, 1])
            v = paddle.tile(v, [1, n_rep, 1, 1])
        else:
            k = paddle.repeat_interleave(k, n_rep, axis=1)
            v = paddle.repeat_interleave(v, n_rep, axis=1)
        scores = paddle.matmul(q, k, transpose_y=True) / math.sqrt(HEAD_DIM) + attn_mask
        probs = F.softmax(scores, axis=-1)
        out = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([bsz, seq_len, N_HEADS * HEAD_DIM])
        return self.o_proj(out)


class SwiGLUMLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.up_proj = nn.Linear(HIDDEN, INTER, bias_attr=False)
        self.gate_proj = nn.Linear(HIDDEN, INTER, bias_attr=False)
        self.down_proj = nn.Linear(INTER, HIDDEN, bias_attr=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Layer):
    def __init__(self, norm_eps, tile_kv=False):
        super().__init__()
        self.input_layernorm = RMSNorm(HIDDEN, epsilon=norm_eps) if norm_eps else RMSNorm(HIDDEN)
        self.self_attn = GQAttention(tile_kv)
        self.post_attention_layernorm = RMSNorm(HIDDEN, epsilon=norm_eps) if norm_eps else RMSNorm(HIDDEN)
        self.mlp = SwiGLUMLP()

    def forward(self, h, attn_mask):
        h = h + self.self_attn(self.input_layernorm(h), attn_mask)
        return h + self.mlp(self.post_attention_layernorm(h))


class InternLM2LM(nn.Layer):
    def __init__(self, norm_eps=RMS_EPS, tile_kv=False):
        super().__init__()
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias_attr=False)
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN, weight_attr=nn.initializer.Normal(0.0, 0.05))
        self.layers = nn.LayerList([DecoderLayer(norm_eps, tile_kv) for _ in range(N_LAYERS)])
        self.norm = RMSNorm(HIDDEN, epsilon=norm_eps) if norm_eps else RMSNorm(HIDDEN)

    def forward(self, input_ids):
        seq_len = input_ids.shape[1]
        h = self.embed_tokens(input_ids)
        future = paddle.triu(paddle.ones([seq_len, seq_len], dtype="float32"), diagonal=1)
        attn_mask = paddle.where(future > 0, paddle.full_like(future, float("-inf")), paddle.zeros_like(future))
        for layer in self.layers:
            h = layer(h, attn_mask)
        return self.lm_head(self.norm(h))


def _trained_look(m):
    rng = np.random.default_rng(7)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, RMSNorm):
            layer.weight.set_value(rng.uniform(0.7, 1.3, HIDDEN).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_internlm2 paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    # the bug: the porter forgets to pass the config's rms_norm_eps, RMSNorm falls back to 1e-6
    norm_eps = None if bug == "paddle_rmsnorm_default_eps" else RMS_EPS
    m = InternLM2LM(norm_eps=norm_eps, tile_kv=bug == "paddle_gqa_tile")
    _trained_look(m)
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(23)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 12, 64]
    return (output**2).mean()
