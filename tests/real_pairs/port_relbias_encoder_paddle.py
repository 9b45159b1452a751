"""Hand-written port, paddle side: a tiny T5-style Transformer encoder with bucketed relative
position bias (written by "person A").

Input: positional `input_ids` [2, 12] int64 (numpy rng seed 33). Output: the final-norm hidden
states [2, 12, 32].

Shared sizes: vocab 64, width 32, 4 heads of 8, gated-GELU FFN hidden 64, 2 layers, pre-norm
residual blocks and a final norm. The norm is T5's RMS-style norm: x * rsqrt(mean(x^2) + 1e-6) * w
(no mean subtraction, no bias). Attention logits are q . k^T WITHOUT the 1/sqrt(d) scaling (T5
folds it into the initialisation) plus a relative position bias bias[h, i, j] = table[bucket(j - i),
h], one table (16 buckets x 4 heads) shared by both layers. Buckets (bidirectional, T5): half of
them (8) per direction, offset 8 for keys to the right (j > i); inside a half, distances 0..3 are
exact and larger ones are log-spaced up to max_distance 20:
  bucket(n) = 4 + floor(log(n / 4) / log(20 / 4) * 4), clipped to 7.
The FFN is gelu_tanh(x W_gate) * (x W_up) W_down (T5 v1.1 "gated-gelu", tanh-approximate GELU).

Paddle idioms on this side:
- root `RelBiasEncoder`: `embed_tokens`, `rel_bias` (a `RelPositionBias` layer called ONCE per
  forward with (q_len, k_len) ints, returning [1, 4, 12, 12]), `layers` (LayerList of
  `EncoderLayer`, iterated), `final_norm`.
- `RelPositionBias` holds ONE parameter `bias_table` [heads, buckets] = [4, 16] (create_parameter),
  computes the buckets with paddle ops in its forward (`_bucketize` helper) and gathers columns.
- `EncoderLayer`: `attn_norm`, `attn`, `ffn_norm`, `ffn`; the residual adds are inline.
- `BiasedSelfAttention`: separate `q_proj`, `k_proj`, `v_proj`, `out_proj` Linears (no bias,
  [in, out] weights); the bias is an argument of its forward.
- `GatedGeluFFN`: separate `gate`, `up`, `down` Linears, F.gelu(approximate=True) inline.
- `RMSNorm` is hand-written with create_parameter.
- model() gives the norms trained-looking weights U(0.6, 1.4) and the bias table N(0, 0.6) values
  (seeded), so nothing is an identity.

The torch side (port_relbias_encoder_torch.py) was written independently in the HF T5 style.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_bucket_direction_flipped -> `_bucketize` gives the +8 offset to keys on the LEFT
                                     (j < i) instead of the right, so the bias is transposed
  paddle_norm_mean_sub            -> RMSNorm subtracts the mean first (a LayerNorm without bias),
                                     in every norm
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, D_MODEL, N_HEADS, HEAD_DIM, D_FF, N_LAYERS = 64, 32, 4, 8, 64, 2
NUM_BUCKETS, MAX_DISTANCE, NORM_EPS = 16, 20, 1e-6
BATCH, SEQ = 2, 12
OWN_BUGS = {"paddle_bucket_direction_flipped", "paddle_norm_mean_sub"}
OTHER_BUGS = {"torch_max_distance_default", "torch_gelu_exact"}


def _bucketize(q_len, k_len, num_buckets, max_distance, flipped=False):
    """[q_len, k_len] int64 bucket ids of the relative position (key - query)."""
    q_pos = paddle.arange(q_len, dtype="int64").unsqueeze(1)
    k_pos = paddle.arange(k_len, dtype="int64").unsqueeze(0)
    rel = k_pos - q_pos
    half = num_buckets // 2
    to_right = (rel < 0) if flipped else (rel > 0)
    offset = to_right.astype("int64") * half
    dist = paddle.abs(rel)
    exact = half // 2
    dist_f = paddle.clip(dist.astype("float32"), min=1.0)
    far = exact + (paddle.log(dist_f / exact) / math.log(max_distance / exact) * (half - exact)).astype("int64")
    far = paddle.minimum(far, paddle.full_like(far, half - 1))
    return offset + paddle.where(dist < exact, dist, far)


class RelPositionBias(nn.Layer):
    def __init__(self, num_heads, num_buckets, max_distance, flipped=False):
        super().__init__()
        self.num_heads, self.num_buckets, self.max_distance = num_heads, num_buckets, max_distance
        self.flipped = flipped
        self.bias_table = self.create_parameter([num_heads, num_buckets],
                                                default_initializer=nn.initializer.Normal(0.0, 0.1))

    def forward(self, q_len, k_len):
        buckets = _bucketize(q_len, k_len, self.num_buckets, self.max_distance, self.flipped)
        bias = paddle.gather(self.bias_table, buckets.reshape([-1]), axis=1)  # [H, q*k]
        return bias.reshape([1, self.num_heads, q_len, k_len])


class RMSNorm(nn.Layer):
    def __init__(self, dim, eps=NORM_EPS, mean_sub=False):
        super().__init__()
        self.eps, self.mean_sub = eps, mean_sub
        self.weight = self.create_parameter([dim], default_initializer=nn.initializer.Constant(1.0))

    def forward(self, x):
        if self.mean_sub:
            x = x - x.mean(axis=-1, keepdim=True)
        ms = (x * x).mean(axis=-1, keepdim=True)
        return x * paddle.rsqrt(ms + self.eps) * self.weight


class BiasedSelfAttention(nn.Layer):
    def __init__(self):
        super().__init__()
        inner = N_HEADS * HEAD_DIM
        self.q_proj = nn.Linear(D_MODEL, inner, bias_attr=False)
        self.k_proj = nn.Linear(D_MODEL, inner, bias_attr=False)
        self.v_proj = nn.Linear(D_MODEL, inner, bias_attr=False)
        self.out_proj = nn.Linear(inner, D_MODEL, bias_attr=False)

    def _heads(self, x):
        b, n = x.shape[0], x.shape[1]
        return x.reshape([b, n, N_HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])

    def forward(self, x, pos_bias):
        q, k, v = self._heads(self.q_proj(x)), self._heads(self.k_proj(x)), self._heads(self.v_proj(x))
        logits = paddle.matmul(q, k, transpose_y=True) + pos_bias  # T5: no 1/sqrt(d)
        probs = F.softmax(logits, axis=-1)
        ctx = paddle.matmul(probs, v).transpose([0, 2, 1, 3])
        ctx = ctx.reshape([ctx.shape[0], ctx.shape[1], N_HEADS * HEAD_DIM])
        return self.out_proj(ctx)


class GatedGeluFFN(nn.Layer):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(D_MODEL, D_FF, bias_attr=False)
        self.up = nn.Linear(D_MODEL, D_FF, bias_attr=False)
        self.down = nn.Linear(D_FF, D_MODEL, bias_attr=False)

    def forward(self, x):
        return self.down(F.gelu(self.gate(x), approximate=True) * self.up(x))


class EncoderLayer(nn.Layer):
    def __init__(self, mean_sub=False):
        super().__init__()
        self.attn_norm = RMSNorm(D_MODEL, mean_sub=mean_sub)
        self.attn = BiasedSelfAttention()
        self.ffn_norm = RMSNorm(D_MODEL, mean_sub=mean_sub)
        self.ffn = GatedGeluFFN()

    def forward(self, x, pos_bias):
        x = x + self.attn(self.attn_norm(x), pos_bias)
        return x + self.ffn(self.ffn_norm(x))


class RelBiasEncoder(nn.Layer):
    def __init__(self, flipped=False, mean_sub=False):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, D_MODEL)
        self.rel_bias = RelPositionBias(N_HEADS, NUM_BUCKETS, MAX_DISTANCE, flipped)
        self.layers = nn.LayerList([EncoderLayer(mean_sub) for _ in range(N_LAYERS)])
        self.final_norm = RMSNorm(D_MODEL, mean_sub=mean_sub)

    def forward(self, input_ids):
        h = self.embed_tokens(input_ids)
        seq = input_ids.shape[1]
        pos_bias = self.rel_bias(seq, seq)
        for layer in self.layers:
            h = layer(h, pos_bias)
        return self.final_norm(h)


def _trained_look(m):
    rng = np.random.default_rng(71)
    m.embed_tokens.weight.set_value(rng.normal(0.0, 1.0, (VOCAB, D_MODEL)).astype("float32"))
    m.rel_bias.bias_table.set_value(rng.normal(0.0, 0.6, (N_HEADS, NUM_BUCKETS)).astype("float32"))
    for _name, layer in m.named_sublayers():
        if isinstance(layer, RMSNorm):
            layer.weight.set_value(rng.uniform(0.6, 1.4, D_MODEL).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_relbias_encoder paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = RelBiasEncoder(flipped=bug == "paddle_bucket_direction_flipped", mean_sub=bug == "paddle_norm_mean_sub")
    _trained_look(m)
    m.eval()
    return m


def _ids():
    return np.random.default_rng(33).integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # final hidden states [2, 12, 32]
    return (output**2).mean()
