"""Hand-written port, paddle side: a tiny RetNet-style decoder LM (written by "person A").

Sizes: vocab 64, hidden 32, 4 heads of 8, FFN 64, 2 layers, sequence length 16, batch 2.
Pre-LayerNorm residual blocks (eps 1e-6) and a final LayerNorm, an untied output projection.

Multi-scale retention (parallel form), torchscale style:
- per-head decay gamma_h = 1 - 2^(-5 - h), h = 0..3 (0.969, 0.984, 0.992, 0.996); kept here as
  a buffer `log_decay` = log(gamma) in every retention layer;
- relative position: the rotary "theta shift" of torchscale on q and k (pairs (0,1), (2,3), ...
  rotated, `rotate_every_two`), angles 1 / 10000^linspace(0, 1, 4); the sin / cos tables are
  built by a root-level `rel_pos` layer (no parameters, buffer `angle`) and passed to the layers;
- k is scaled by head_dim^-0.5 right after its projection;
- the causal decay mask is built in LOG space: D[h, n, m] = exp((n - m) * log gamma_h) for
  n >= m, exp(-inf) = 0 above the diagonal, then each row is divided by the square root of its sum;
- retention = ((q k^T) * D) v per head, then a GroupNorm(4 groups = heads, 32 channels, eps 1e-6)
  over the [B * L, 32] flattened heads, then swish(g) * that, then `out_proj`.

Paddle idioms on this side: FOUR separate Linears (registered g_proj, q_proj, k_proj, v_proj, in
that order, called q, k, v, g), Linear weights [in, out], nn.GroupNorm on a 2-D input,
`paddle.where` with -inf, F.silu / F.gelu inline, create-time initialisers.

The torch side (port_retnet_torch.py) was written independently: one packed q|k|v|g Linear, the
decay mask built with powers gamma ** (n - m) times a 0/1 causal matrix, the rotation done with
complex multiplication, nn.Sequential FFN.

PADIFF_BUG names for this side:
  paddle_mask_off_by_one   -> the causal matrix is paddle.tril(ones, diagonal=1): each position
                              also retains the NEXT one, with weight exp(-log gamma) = 1 / gamma
  paddle_layernorm_not_group -> the retention's `group_norm` is an nn.LayerNorm(32) over all
                              heads together instead of a GroupNorm with one group per head
The torch side's bug names are accepted and ignored; any other name raises ValueError.
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, HIDDEN, HEADS, FFN_DIM, LAYERS = 64, 32, 4, 64, 2
HEAD_DIM = HIDDEN // HEADS
LN_EPS = 1e-6
BATCH, SEQ = 2, 16
OWN_BUGS = {"paddle_mask_off_by_one", "paddle_layernorm_not_group"}
OTHER_BUGS = {"torch_decay_per_layer"}


def _affine(mean):
    return paddle.ParamAttr(initializer=nn.initializer.Normal(mean, 0.1))


def rotate_every_two(x):
    x1 = x[..., 0::2]
    x2 = x[..., 1::2]
    return paddle.stack([-x2, x1], axis=-1).flatten(-2)


def theta_shift(x, sin, cos):
    return x * cos + rotate_every_two(x) * sin


class RetNetRelPos(nn.Layer):
    """sin / cos tables [L, head_dim] of the theta shift (no parameters)."""

    def __init__(self):
        super().__init__()
        angle = 1.0 / (10000 ** paddle.linspace(0, 1, HEAD_DIM // 2))
        angle = angle.unsqueeze(-1).tile([1, 2]).flatten()  # repeat_interleave(2)
        self.register_buffer("angle", angle)

    def forward(self, slen):
        index = paddle.arange(slen, dtype="float32")
        phase = index.unsqueeze(-1) * self.angle.unsqueeze(0)
        return paddle.sin(phase), paddle.cos(phase)


class MultiScaleRetention(nn.Layer):
    def __init__(self, mask_off_by_one=False, layer_norm=False):
        super().__init__()
        self.mask_off_by_one = mask_off_by_one
        self.scaling = HEAD_DIM**-0.5
        self.g_proj = nn.Linear(HIDDEN, HIDDEN)
        self.q_proj = nn.Linear(HIDDEN, HIDDEN)
        self.k_proj = nn.Linear(HIDDEN, HIDDEN)
        self.v_proj = nn.Linear(HIDDEN, HIDDEN)
        self.out_proj = nn.Linear(HIDDEN, HIDDEN)
        if layer_norm:
            self.group_norm = nn.LayerNorm(HIDDEN, epsilon=LN_EPS, weight_attr=_affine(1.0), bias_attr=_affine(0.0))
        else:
            self.group_norm = nn.GroupNorm(HEADS, HIDDEN, epsilon=LN_EPS, weight_attr=_affine(1.0), bias_attr=_affine(0.0))
        gamma = 1.0 - 2.0 ** (-5.0 - np.arange(HEADS, dtype="float64"))
        self.register_buffer("log_decay", paddle.to_tensor(np.log(gamma).astype("float32")))

    def decay_mask(self, slen):
        index = paddle.arange(slen, dtype="float32")
        dist = index.unsqueeze(1) - index.unsqueeze(0)  # n - m
        causal = paddle.tril(paddle.ones([slen, slen]), diagonal=1 if self.mask_off_by_one else 0) > 0
        logits = dist.unsqueeze(0) * self.log_decay.reshape([HEADS, 1, 1])  # [H, L, L]
        causal = causal.unsqueeze(0).expand([HEADS, slen, slen])
        mask = paddle.exp(paddle.where(causal, logits, paddle.full_like(logits, float("-inf"))))
        return mask / mask.sum(axis=-1, keepdim=True).sqrt()

    def forward(self, x, sin, cos):
        bsz, slen, _ = x.shape
        q = self.q_proj(x)
        k = self.k_proj(x) * self.scaling
        v = self.v_proj(x)
        g = self.g_proj(x)
        q = q.reshape([bsz, slen, HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])
        k = k.reshape([bsz, slen, HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])
        v = v.reshape([bsz, slen, HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])
        qr = theta_shift(q, sin, cos)
        kr = theta_shift(k, sin, cos)
        qk = paddle.matmul(qr, kr, transpose_y=True) * self.decay_mask(slen)
        out = paddle.matmul(qk, v)  # [B, H, L, D]
        out = out.transpose([0, 2, 1, 3]).reshape([bsz * slen, HIDDEN])
        out = self.group_norm(out).reshape([bsz, slen, HIDDEN])
        return self.out_proj(F.silu(g) * out)


class FeedForward(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(HIDDEN, FFN_DIM)
        self.fc2 = nn.Linear(FFN_DIM, HIDDEN)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class RetNetDecoderLayer(nn.Layer):
    def __init__(self, **bugs):
        super().__init__()
        self.retention_layer_norm = nn.LayerNorm(HIDDEN, epsilon=LN_EPS, weight_attr=_affine(1.0), bias_attr=_affine(0.0))
        self.retention = MultiScaleRetention(**bugs)
        self.final_layer_norm = nn.LayerNorm(HIDDEN, epsilon=LN_EPS, weight_attr=_affine(1.0), bias_attr=_affine(0.0))
        self.ffn = FeedForward()

    def forward(self, x, sin, cos):
        x = x + self.retention(self.retention_layer_norm(x), sin, cos)
        return x + self.ffn(self.final_layer_norm(x))


class RetNetDecoder(nn.Layer):
    def __init__(self, **bugs):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN, weight_attr=paddle.ParamAttr(initializer=nn.initializer.Normal(0.0, 0.5)))
        self.rel_pos = RetNetRelPos()
        self.layers = nn.LayerList([RetNetDecoderLayer(**bugs) for _ in range(LAYERS)])
        self.layer_norm = nn.LayerNorm(HIDDEN, epsilon=LN_EPS, weight_attr=_affine(1.0), bias_attr=_affine(0.0))
        self.output_projection = nn.Linear(HIDDEN, VOCAB, bias_attr=False)

    def forward(self, input_ids):
        x = self.embed_tokens(input_ids)
        sin, cos = self.rel_pos(input_ids.shape[1])
        for layer in self.layers:
            x = layer(x, sin, cos)
        return self.output_projection(self.layer_norm(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_retnet paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = RetNetDecoder(mask_off_by_one=bug == "paddle_mask_off_by_one", layer_norm=bug == "paddle_layernorm_not_group")
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(21)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 16, 64]
    return (output**2).mean()

