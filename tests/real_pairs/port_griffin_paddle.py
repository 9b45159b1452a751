"""Hand-written port, paddle side: a tiny Griffin (RecurrentGemma-style) language model (written by "person A").

Input: `input_ids` [2, 12] int64 (positional, numpy rng seed 97, ids in [0, 50)). Output: logits
[2, 12, 50].

Shared sizes: vocab 50, width 32, 3 residual blocks of temporal types (recurrent, attention,
recurrent), RG-LRU width 32 in 4 blocks of 8, causal depthwise Conv1D of width 4, local MQA
attention with 4 query heads of 8, one shared key / value head, window 4 (a token sees itself
and the 3 previous tokens), rotary on the first half (4 dims) of each head, gated MLP 32 -> 2 x 64
-> 32, RMSNorm eps 1e-6, GELU = tanh approximation everywhere (as jax.nn.gelu).

  x = embedder(ids) * sqrt(32)
  per block: x = x + temporal(norm(x)); x = x + mlp(norm(x))
  logits = tanh((final_norm(x) @ E^T) / 30) * 30          (tied head, soft cap 30)

RecurrentBlock: y = gelu(linear_y(x)); x = rg_lru(conv_1d(linear_x(x))); out = linear_out(x * y)
RG-LRU (c = 8):
  gate_x = sigmoid(input_gate(x)), gate_a = sigmoid(a_gate(x))   (block-diagonal linears)
  log_a = -c * gate_a * softplus(a_param);  a = exp(log_a)
  x_t' = x_t * gate_x * sqrt(1 - a^2)   (multiplier 1 at segment position 0: reset)
  h_t = a_t * h_{t-1} + x_t'            (h_{-1} = 0)

Paddle idioms on this side (recurrentgemma reference layout):
- root `GriffinLM`: `embedder` (own `Embedder` layer holding `input_embedding` [50, 32];
  forward = lookup * sqrt(width); its `decode` method, not a layer call, is the tied head),
  `layers` (LayerList of `ResidualBlock`), `final_norm`. The soft cap is inline in the root.
- `RMSNorm` is Gemma-style: parameter `scale` (zero-centred), output x * rsqrt(ms + eps) *
  (1 + scale).
- `ResidualBlock`: `temporal_pre_norm`, `temporal_block`, `channel_pre_norm`, `mlp_block`.
- `RecurrentBlock`: separate `linear_y`, `linear_x`, `linear_out`, then `conv_1d` (own `Conv1D`:
  `w` [4, 32], `b` [32], an explicit sum over time shifts, tap w[3] on x_t, w[0] on x_{t-3}),
  then `rg_lru` (`a_param` [32], `input_gate` / `a_gate` = `BlockDiagonalLinear` with `w`
  [4, 8, 8] (in, out) and `b` [4, 8]); the scan is a Python loop over time inline in RGLRU.
- `LocalAttentionBlock`: separate `proj_q`, `proj_k`, `proj_v` (no bias), `proj_final` (bias);
  rotary and the banded mask are inline helpers; softmax by hand (F.softmax).
- `MLPBlock`: ONE fused up projection, parameters `ffw_up_w` [2, 32, 64] (gate | up, [in, out]
  each) and `ffw_up_b` [2, 64], applied by einsum; then `ffw_down` Linear; the GELU is inline.
- model() gives the norm scales, biases and the RG-LRU `a_param` trained-looking (seeded) values.

The torch side (port_griffin_torch.py) was written independently (HF-like): Mamba-style `a_log`,
a fused x|y input projection, an nn.Conv1d, grouped 1x1 Conv1d gates, channels-first recurrent
internals, a parallel log-cumsum scan module, a fused k|v projection, SDPA, separate gate / up
MLP projections with an nn.GELU module, a direct-weight RMSNorm and a normaliser buffer.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_conv1d_flipped     -> Conv1D.forward multiplies the shift-s input by w[s] instead of
                               w[3 - s] (kernel flipped: convolution vs correlation)
  paddle_window_off_by_one  -> the local-attention band allows distance <= 4 instead of < 4,
                               so each token sees 5 tokens instead of 4
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, WIDTH, LRU_WIDTH, LRU_HEADS = 50, 32, 32, 4
CONV_WIDTH, MLP_HIDDEN = 4, 64
ATT_HEADS, HEAD_DIM, WINDOW, MAX_WAVELENGTH = 4, 8, 4, 10_000
BLOCK_TYPES = ("recurrent", "attention", "recurrent")
RG_C, SOFT_CAP, EPS = 8.0, 30.0, 1e-6
BATCH, SEQ = 2, 12
OWN_BUGS = {"paddle_conv1d_flipped", "paddle_window_off_by_one"}
OTHER_BUGS = {"torch_exact_gelu", "torch_scan_drops_current"}

_CFG = {"flip": False, "window_le": False}


def gelu(x):
    return F.gelu(x, approximate=True)


class RMSNorm(nn.Layer):
    def __init__(self, dim):
        super().__init__()
        self.scale = self.create_parameter([dim], default_initializer=nn.initializer.Constant(0.0))

    def forward(self, x):
        var = paddle.mean(x * x, axis=-1, keepdim=True)
        return x * paddle.rsqrt(var + EPS) * (1.0 + self.scale)


class Embedder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.input_embedding = self.create_parameter(
            [VOCAB, WIDTH], default_initializer=nn.initializer.Normal(0.0, 0.15))

    def forward(self, ids):
        return F.embedding(ids, self.input_embedding) * math.sqrt(WIDTH)

    def decode(self, x):
        return paddle.matmul(x, self.input_embedding, transpose_y=True)


class BlockDiagonalLinear(nn.Layer):
    def __init__(self, width, heads):
        super().__init__()
        self.heads, self.bw = heads, width // heads
        self.w = self.create_parameter([heads, self.bw, self.bw],
                                       default_initializer=nn.initializer.Normal(0.0, 1.0 / math.sqrt(self.bw)))
        self.b = self.create_parameter([heads, self.bw], default_initializer=nn.initializer.Constant(0.0))

    def forward(self, x):
        shape = x.shape
        x = x.reshape(shape[:-1] + [self.heads, self.bw])
        y = paddle.einsum("bthi,hij->bthj", x, self.w) + self.b
        return y.reshape(shape)


class RGLRU(nn.Layer):
    def __init__(self, width, heads):
        super().__init__()
        self.a_param = self.create_parameter([width], default_initializer=nn.initializer.Constant(0.0))
        self.input_gate = BlockDiagonalLinear(width, heads)
        self.a_gate = BlockDiagonalLinear(width, heads)

    def forward(self, x, segment_pos):
        gate_x = F.sigmoid(self.input_gate(x))
        gate_a = F.sigmoid(self.a_gate(x))
        log_a = -RG_C * gate_a * F.softplus(self.a_param)
        a = paddle.exp(log_a)
        a_square = paddle.exp(2.0 * log_a)
        gated_x = x * gate_x
        multiplier = paddle.sqrt(1.0 - a_square)
        reset = (segment_pos == 0).astype(x.dtype).reshape([1, -1, 1])
        multiplier = reset + (1.0 - reset) * multiplier
        normalized_x = gated_x * multiplier
        h = paddle.zeros([x.shape[0], x.shape[2]], dtype=x.dtype)
        ys = []
        for t in range(x.shape[1]):
            h = a[:, t] * h + normalized_x[:, t]
            ys.append(h)
        return paddle.stack(ys, axis=1)


class Conv1D(nn.Layer):
    def __init__(self, width, temporal_width):
        super().__init__()
        self.temporal_width = temporal_width
        self.flipped = _CFG["flip"]
        self.w = self.create_parameter([temporal_width, width],
                                       default_initializer=nn.initializer.Normal(0.0, 1.0 / math.sqrt(temporal_width)))
        self.b = self.create_parameter([width], default_initializer=nn.initializer.Constant(0.0))

    def forward(self, x):  # [B, T, D]
        T = x.shape[1]
        out = paddle.zeros_like(x) + self.b
        for shift in range(self.temporal_width):
            if shift == 0:
                x_shifted = x
            else:
                x_shifted = paddle.concat([paddle.zeros_like(x[:, :shift]), x[:, :T - shift]], axis=1)
            tap = shift if self.flipped else self.temporal_width - shift - 1
            out = out + x_shifted * self.w[tap]
        return out


class RecurrentBlock(nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear_y = nn.Linear(WIDTH, LRU_WIDTH)
        self.linear_x = nn.Linear(WIDTH, LRU_WIDTH)
        self.linear_out = nn.Linear(LRU_WIDTH, WIDTH)
        self.conv_1d = Conv1D(LRU_WIDTH, CONV_WIDTH)
        self.rg_lru = RGLRU(LRU_WIDTH, LRU_HEADS)

    def forward(self, x, segment_pos):
        y = gelu(self.linear_y(x))
        x = self.linear_x(x)
        x = self.conv_1d(x)
        x = self.rg_lru(x, segment_pos)
        return self.linear_out(x * y)


def _apply_rope(x, positions):
    """x: [B, T, N, H]; rotary on the first half of H, split-halves rotation."""
    x_rope, x_pass = paddle.split(x, 2, axis=-1)
    rope_dim = x_rope.shape[-1]
    freq = paddle.arange(rope_dim // 2, dtype="float32")
    timescale = MAX_WAVELENGTH ** (2.0 * freq / rope_dim)
    inp = positions.astype("float32").reshape([1, -1, 1, 1]) / timescale
    sin, cos = paddle.sin(inp), paddle.cos(inp)
    first, second = paddle.split(x_rope, 2, axis=-1)
    first_part = first * cos - second * sin
    second_part = second * cos + first * sin
    return paddle.concat([first_part, second_part, x_pass], axis=-1)


class LocalAttentionBlock(nn.Layer):
    def __init__(self):
        super().__init__()
        self.proj_q = nn.Linear(WIDTH, ATT_HEADS * HEAD_DIM, bias_attr=False)
        self.proj_k = nn.Linear(WIDTH, HEAD_DIM, bias_attr=False)
        self.proj_v = nn.Linear(WIDTH, HEAD_DIM, bias_attr=False)
        self.proj_final = nn.Linear(ATT_HEADS * HEAD_DIM, WIDTH)
        self.window_inclusive = _CFG["window_le"]

    def forward(self, x, segment_pos):
        B, T, _ = x.shape
        q = self.proj_q(x).reshape([B, T, ATT_HEADS, HEAD_DIM])
        k = self.proj_k(x).reshape([B, T, 1, HEAD_DIM])
        v = self.proj_v(x).reshape([B, T, 1, HEAD_DIM])
        q = _apply_rope(q, segment_pos)
        k = _apply_rope(k, segment_pos)
        q = q * HEAD_DIM ** -0.5
        logits = paddle.einsum("btnh,bsnh->bnts", q, k.expand([B, T, ATT_HEADS, HEAD_DIM]))
        dist = segment_pos.reshape([-1, 1]) - segment_pos.reshape([1, -1])
        if self.window_inclusive:
            allowed = (dist >= 0) & (dist <= WINDOW)
        else:
            allowed = (dist >= 0) & (dist < WINDOW)
        logits = paddle.where(allowed.reshape([1, 1, T, T]), logits, paddle.full_like(logits, -1e30))
        probs = F.softmax(logits, axis=-1)
        out = paddle.einsum("bnts,bsnh->btnh", probs, v.expand([B, T, ATT_HEADS, HEAD_DIM]))
        return self.proj_final(out.reshape([B, T, ATT_HEADS * HEAD_DIM]))


class MLPBlock(nn.Layer):
    def __init__(self):
        super().__init__()
        self.ffw_up_w = self.create_parameter(
            [2, WIDTH, MLP_HIDDEN], default_initializer=nn.initializer.Normal(0.0, 1.0 / math.sqrt(WIDTH)))
        self.ffw_up_b = self.create_parameter([2, MLP_HIDDEN], default_initializer=nn.initializer.Constant(0.0))
        self.ffw_down = nn.Linear(MLP_HIDDEN, WIDTH)

    def forward(self, x):
        out = paddle.einsum("btd,cdh->cbth", x, self.ffw_up_w) + self.ffw_up_b.reshape([2, 1, 1, MLP_HIDDEN])
        return self.ffw_down(gelu(out[0]) * out[1])


class ResidualBlock(nn.Layer):
    def __init__(self, block_type):
        super().__init__()
        self.temporal_pre_norm = RMSNorm(WIDTH)
        self.temporal_block = RecurrentBlock() if block_type == "recurrent" else LocalAttentionBlock()
        self.channel_pre_norm = RMSNorm(WIDTH)
        self.mlp_block = MLPBlock()

    def forward(self, x, segment_pos):
        raw = x
        x = self.temporal_block(self.temporal_pre_norm(x), segment_pos)
        residual = x + raw
        x = self.mlp_block(self.channel_pre_norm(residual))
        return x + residual


class GriffinLM(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embedder = Embedder()
        self.layers = nn.LayerList([ResidualBlock(t) for t in BLOCK_TYPES])
        self.final_norm = RMSNorm(WIDTH)

    def forward(self, input_ids):
        segment_pos = paddle.arange(input_ids.shape[1], dtype="int64")
        x = self.embedder(input_ids)
        for layer in self.layers:
            x = layer(x, segment_pos)
        logits = self.embedder.decode(self.final_norm(x))
        return paddle.tanh(logits / SOFT_CAP) * SOFT_CAP


def _trained_look(m):
    rng = np.random.default_rng(971)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, RMSNorm):
            layer.scale.set_value(rng.normal(0.0, 0.15, WIDTH).astype("float32"))
        elif isinstance(layer, BlockDiagonalLinear):
            layer.b.set_value(rng.normal(0.0, 0.5, layer.b.shape).astype("float32"))
        elif isinstance(layer, Conv1D):
            layer.b.set_value(rng.normal(0.0, 0.1, layer.b.shape).astype("float32"))
        elif isinstance(layer, RGLRU):
            # recurrentgemma rnn_param_init: a^c-base = exp(-softplus(a_param)) uniform-ish in [0.6, 0.99]
            u = rng.uniform(0.6**2, 0.99**2, LRU_WIDTH)
            layer.a_param.set_value(np.log(np.expm1(-0.5 * np.log(u))).astype("float32"))
        elif isinstance(layer, MLPBlock):
            layer.ffw_up_b.set_value(rng.normal(0.0, 0.1, layer.ffw_up_b.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_griffin paddle: unknown PADIFF_BUG {bug!r}")
    _CFG["flip"] = bug == "paddle_conv1d_flipped"
    _CFG["window_le"] = bug == "paddle_window_off_by_one"
    paddle.seed(0)
    m = GriffinLM()
    _trained_look(m)
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(97)
    return rng.integers(0, VOCAB, size=(BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 12, 50]
    return (output**2).mean()
