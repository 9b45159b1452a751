"""Hand-written port, paddle side: a small Informer-style time-series encoder (written by "person A").

Inputs (positional): `x_enc` [2, 24, 5] float32 (numpy rng seed 31, a noisy multi-sine series)
and `x_mark` [2, 24, 4] int64 calendar marks per step, columns (month 0..12, day 0..31, weekday
0..6, hour 0..23) of consecutive hours. Output: [2, 12, 5] (the 24 steps are halved by the one
distilling layer).

Model (d_model 32, 4 heads of 8, d_ff 64, 2 encoder layers, 1 distilling layer between them):
  embedding  = token conv (Conv1d 5 -> 32, kernel 3, CIRCULAR padding, no bias)
             + fixed sinusoidal positional encoding (sin on even, cos on odd channels)
             + fixed sinusoidal calendar embedding (month + day + weekday + hour tables, each
               built like the positional table)
  encoder layer (post-norm): x = LN(x + ProbAttn(x)); x = LN(x + W2 gelu(W1 x))
  ProbSparse attention, made deterministic: scores S = Q K^T over ALL keys (no key sampling);
    sparsity M(q_i) = max_j S_ij - mean_j S_ij; the u = min(2 * ceil(ln L), L) queries with the
    largest M (8 of 24 in layer 0, 6 of 12 in layer 1) get softmax(S / sqrt(8)) V; every other
    query gets the mean of V over the sequence; then the output projection.
  distilling layer: Conv1d 32 -> 32 (kernel 3, circular padding) -> BatchNorm -> ELU ->
    MaxPool1d(3, stride 2, padding 1)
  then a final LayerNorm and a Linear projection 32 -> 5 per step.

Paddle idioms on this side:
- root `InformerEncoderModel` registers `embedding`, `encoder_layers` (LayerList of
  EncoderBlock), `distil_layers` (LayerList of DistilBlock), `final_norm`, `head`, and
  interleaves the two lists in its own forward.
- `InputEmbedding`: `token_conv` = Conv1D(5, 32, 3, padding=0, bias_attr=False) applied after an
  EXPLICIT F.pad(mode="circular") inline; the positional encoding is COMPUTED INLINE in every
  forward (helper `sinusoid_table`, paddle ops); the four calendar tables are ONE concatenated
  registered buffer `calendar_table` [13 + 32 + 7 + 24, 32], indexed with per-column offsets
  and summed over the 4 marks.
- `EncoderBlock`: `self_attn` (ProbSparseSelfAttention), `norm1`, `ffn1` Linear(32, 64),
  `ffn2` Linear(64, 32), `norm2`; F.gelu inline.
- `ProbSparseSelfAttention`: ONE fused `qkv` Linear(32, 96) ([q | k | v] columns) and
  `out_proj`; the sparsity measure, paddle.topk, the selection mask (put_along_axis) and
  paddle.where between the full attention rows and the mean of V are all inline.
- `DistilBlock`: `conv` Conv1D(32, 32, 3, padding=1, padding_mode="circular"), `bn`
  BatchNorm1D(32), F.elu and F.max_pool1d inline.
- model() gives the LayerNorms and the BatchNorm trained-looking weights / biases / running
  statistics (seeded), so that nothing is an identity.

The torch side (port_informer_torch.py) was written independently, in the layout of the original
Informer code: DataEmbedding with TokenEmbedding / PositionalEmbedding (a `pe` buffer) /
TemporalEmbedding (four FixedEmbedding modules), AttentionLayer with separate projections around
a parameter-free ProbAttention module, Conv1d-based feed-forward, ConvLayer distilling modules.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_sparsity_no_div -> the sparsity measure is max_j S_ij - sum_j S_ij (the division by L_K
                            of the mean is forgotten), so other queries are selected
  paddle_bn_eps_1e3      -> the distilling layer's BatchNorm1D is built with epsilon=1e-3 (the
                            Keras default) instead of 1e-5 (precision-level)
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

C_IN, D_MODEL, N_HEADS, D_FF, C_OUT, E_LAYERS, FACTOR = 5, 32, 4, 64, 5, 2, 2
BATCH, SEQ_LEN = 2, 24
CALENDAR_SIZES = (13, 32, 7, 24)  # month, day, weekday, hour
OWN_BUGS = {"paddle_sparsity_no_div", "paddle_bn_eps_1e3"}
OTHER_BUGS = {"torch_token_zero_pad", "torch_init_context_cumsum"}


def sinusoid_table(n_pos, dim):
    """[n_pos, dim] fixed table: sin on even channels, cos on odd channels (paddle ops)."""
    position = paddle.arange(n_pos, dtype="float32").unsqueeze(1)
    div_term = paddle.exp(paddle.arange(0, dim, 2, dtype="float32") * -(math.log(10000.0) / dim))
    angle = position * div_term
    return paddle.stack([paddle.sin(angle), paddle.cos(angle)], axis=-1).reshape([n_pos, dim])


def _np_sinusoid(n_pos, dim):
    position = np.arange(n_pos, dtype=np.float64)[:, None]
    div_term = np.exp(np.arange(0, dim, 2, dtype=np.float64) * -(math.log(10000.0) / dim))
    angle = position * div_term
    return np.stack([np.sin(angle), np.cos(angle)], axis=-1).reshape(n_pos, dim).astype("float32")


class InputEmbedding(nn.Layer):
    def __init__(self):
        super().__init__()
        self.token_conv = nn.Conv1D(C_IN, D_MODEL, 3, padding=0, bias_attr=False, data_format="NCL")
        table = np.concatenate([_np_sinusoid(n, D_MODEL) for n in CALENDAR_SIZES], axis=0)
        self.register_buffer("calendar_table", paddle.to_tensor(table))
        self.offsets = [int(v) for v in np.cumsum((0,) + CALENDAR_SIZES[:-1])]

    def forward(self, x, marks):
        _, length, _ = x.shape
        h = F.pad(x.transpose([0, 2, 1]), [1, 1], mode="circular", data_format="NCL")
        value = self.token_conv(h).transpose([0, 2, 1])
        position = sinusoid_table(length, D_MODEL).unsqueeze(0)
        idx = marks + paddle.to_tensor(self.offsets, dtype="int64")
        calendar = F.embedding(idx, self.calendar_table).sum(axis=2)
        return value + position + calendar


class ProbSparseSelfAttention(nn.Layer):
    def __init__(self, no_div=False):
        super().__init__()
        self.no_div = no_div
        self.head_dim = D_MODEL // N_HEADS
        self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL)
        self.out_proj = nn.Linear(D_MODEL, D_MODEL)

    def forward(self, x):
        b, length, _ = x.shape
        qkv = self.qkv(x).reshape([b, length, 3, N_HEADS, self.head_dim]).transpose([2, 0, 3, 1, 4])
        q, k, v = qkv[0], qkv[1], qkv[2]  # [B, H, L, D]
        scores = paddle.matmul(q, k, transpose_y=True)  # all keys: deterministic
        if self.no_div:
            sparsity = scores.max(axis=-1) - scores.sum(axis=-1)
        else:
            sparsity = scores.max(axis=-1) - scores.mean(axis=-1)
        u = min(FACTOR * math.ceil(math.log(length)), length)
        top = paddle.topk(sparsity, u, axis=-1)[1]  # [B, H, u]
        selected = paddle.put_along_axis(paddle.zeros_like(sparsity), top, 1.0, axis=-1)
        full = paddle.matmul(F.softmax(scores / math.sqrt(self.head_dim), axis=-1), v)
        lazy = v.mean(axis=2, keepdim=True).expand_as(full)
        ctx = paddle.where(selected.unsqueeze(-1) > 0.5, full, lazy)
        return self.out_proj(ctx.transpose([0, 2, 1, 3]).reshape([b, length, D_MODEL]))


class EncoderBlock(nn.Layer):
    def __init__(self, no_div=False):
        super().__init__()
        self.self_attn = ProbSparseSelfAttention(no_div)
        self.norm1 = nn.LayerNorm(D_MODEL)
        self.ffn1 = nn.Linear(D_MODEL, D_FF)
        self.ffn2 = nn.Linear(D_FF, D_MODEL)
        self.norm2 = nn.LayerNorm(D_MODEL)

    def forward(self, x):
        x = self.norm1(x + self.self_attn(x))
        return self.norm2(x + self.ffn2(F.gelu(self.ffn1(x))))


class DistilBlock(nn.Layer):
    def __init__(self, bn_eps=1e-5):
        super().__init__()
        self.conv = nn.Conv1D(D_MODEL, D_MODEL, 3, padding=1, padding_mode="circular", data_format="NCL")
        self.bn = nn.BatchNorm1D(D_MODEL, momentum=0.9, epsilon=bn_eps, data_format="NCL")

    def forward(self, x):
        h = F.elu(self.bn(self.conv(x.transpose([0, 2, 1]))))
        return F.max_pool1d(h, kernel_size=3, stride=2, padding=1).transpose([0, 2, 1])


class InformerEncoderModel(nn.Layer):
    def __init__(self, no_div=False, bn_eps=1e-5):
        super().__init__()
        self.embedding = InputEmbedding()
        self.encoder_layers = nn.LayerList([EncoderBlock(no_div) for _ in range(E_LAYERS)])
        self.distil_layers = nn.LayerList([DistilBlock(bn_eps) for _ in range(E_LAYERS - 1)])
        self.final_norm = nn.LayerNorm(D_MODEL)
        self.head = nn.Linear(D_MODEL, C_OUT)

    def forward(self, x_enc, x_mark):
        x = self.embedding(x_enc, x_mark)
        for i, block in enumerate(self.encoder_layers):
            x = block(x)
            if i < len(self.distil_layers):
                x = self.distil_layers[i](x)
        return self.head(self.final_norm(x))  # [B, L / 2, C_OUT]


def _trained_look(m):
    rng = np.random.default_rng(41)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            layer.weight.set_value(rng.normal(1.0, 0.15, D_MODEL).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.1, D_MODEL).astype("float32"))
        elif isinstance(layer, nn.BatchNorm1D):
            layer.weight.set_value(rng.uniform(0.6, 1.4, D_MODEL).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, D_MODEL).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, D_MODEL).astype("float32"))
            layer._variance.set_value(rng.uniform(0.02, 0.2, D_MODEL).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_informer paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = InformerEncoderModel(no_div=bug == "paddle_sparsity_no_div", bn_eps=1e-3 if bug == "paddle_bn_eps_1e3" else 1e-5)
    _trained_look(m)
    m.eval()
    return m


def _series():
    rng = np.random.default_rng(31)
    t = np.arange(SEQ_LEN, dtype=np.float64)
    x = np.stack([np.sin(2 * np.pi * t / p + ph) for p, ph in zip((24, 12, 8, 6, 24), (0.0, 0.5, 1.0, 1.5, 2.0))], -1)
    x = np.broadcast_to(x, (BATCH, SEQ_LEN, C_IN)) + 0.3 * rng.standard_normal((BATCH, SEQ_LEN, C_IN))
    hours = np.array([[17 + t_ for t_ in range(SEQ_LEN)], [5 + t_ for t_ in range(SEQ_LEN)]])  # hours since day start
    day0 = np.array([[29], [14]])  # day of month of the first step
    month = np.array([[2], [7]])
    weekday0 = np.array([[4], [0]])
    mark = np.stack(
        [np.broadcast_to(month, hours.shape), day0 + hours // 24, (weekday0 + hours // 24) % 7, hours % 24], -1
    )
    return x.astype("float32"), mark.astype("int64")


def inputs():
    x, mark = _series()
    return (paddle.to_tensor(x), paddle.to_tensor(mark)), {}


def loss(output):
    # forecast-style outputs [2, 12, 5]
    return (output**2).mean()
