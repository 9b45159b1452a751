"""Hand-written port, paddle side: a tiny TimesNet long-term forecaster (written by "person A").

Inputs (positional): `x_enc` [2, 24, 3] float32 (three seasonal channels with trend and noise,
numpy rng seed 31) and `x_mark` [2, 24, 4] int64 hourly calendar marks, columns
(month, day, weekday, hour) as in the Time-Series-Library loaders. Output: the forecast of the
next 8 steps, [2, 8, 3].

The model (seq_len 24, pred_len 8, T = 32, 3 channels, d_model 16, d_ff 16, top-k 2, 2 blocks):
  1. instance normalisation (non-stationary): x = (x - mean_t) / sqrt(var_t + 1e-5)  (biased var)
  2. data embedding: circular value conv (kernel 3, no bias) + sinusoidal positional encoding
     + learned temporal embedding (sum of month / day / weekday / hour tables)
  3. predict_linear over the time axis, 24 -> 32 steps
  4. per block: FFT period discovery (amplitude |rfft| averaged over batch and channels, DC set
     to 0, top-2 frequencies f, period T // f; the per-sample weights are the amplitudes of those
     frequencies averaged over channels); for each period fold the series (zero tail padding up
     to a multiple of the period) into a 2-D map [rows, period], inception (parallel 2-D convs of
     kernel 1, 3, 5, averaged) -> GELU -> inception, unfold, crop to T; softmax over the k
     weights, weighted sum of the k results, residual; then the shared LayerNorm
  5. projection 16 -> 3, de-normalisation, last 8 steps.

Paddle idioms on this side:
- root `TimesNetForecaster` registers `blocks` (LayerList of `TimesBlock`, iterated), ONE shared
  `norm` (nn.LayerNorm(16)) called after every block, `embedding` (DataEmbedding),
  `predict_linear` (nn.Linear(24, 32), applied on the transposed series) and `head`
  (nn.Linear(16, 3)). The instance normalisation and de-normalisation are inline.
- `DataEmbedding`: `value_conv` = nn.Conv1D(3, 16, 3, padding=1, padding_mode="circular",
  bias_attr=False, data_format="NLC") (no transposes), FOUR separate nn.Embedding tables
  `month_embed` (13), `day_embed` (32), `weekday_embed` (7), `hour_embed` (24); the sinusoidal
  table is computed inline in every forward by a module-level helper (no buffer).
- `TimesBlock`: the period discovery is an inline method (`_periods`, paddle.fft.rfft +
  paddle.topk); the fold is a Layer of its own (`fold`, `PeriodFold`) that returns the map in
  NHWC layout [B, rows, period, C]; the convs run channels-last (data_format="NHWC"); the GELU
  between `incep_in` and `incep_out` is inline F.gelu; the unfold, softmax aggregation and
  residual are inline.
- `InceptionBlock`: `branches` = LayerList of three Conv2D (kernel 1, 3, 5, padding 0 / 1 / 2,
  NHWC), stacked on a new last axis and averaged.
- model() gives the LayerNorm (weights U(0.3, 0.6), biases N(0, 0.1)), the embeddings
  (N(0, 0.3)), the inception biases (N(0, 0.1)) and predict_linear (0.3 x a seasonal-naive map,
  continuing 11 steps back, + N(0, 0.01)) trained-looking values (numpy rng seed 23), and the
  first-stage inception kernels 3x their init scale (GELU inputs of std ~1), so that nothing is
  an identity and the softmax over the period amplitudes is not saturated.

The torch side (port_timesnet_torch.py) was written independently in the Time-Series-Library
style: NCHW maps, ONE fused 5x5 Conv2d per inception block, an nn.Sequential(conv, GELU, conv),
a LayerNorm inside every block, a positional-embedding module with a buffer and one packed
temporal table.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_fold_pad_front -> PeriodFold concatenates the zero padding BEFORE the series instead of
                           after it, for the periods that do not divide T (the inline unfold
                           still crops the first T steps)
  paddle_gelu_tanh      -> the GELU between the two inception blocks is F.gelu(approximate=True)
                           (tanh approximation) instead of the exact erf GELU
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

SEQ_LEN, PRED_LEN, ENC_IN, C_OUT = 24, 8, 3, 3
D_MODEL, D_FF, TOP_K, N_BLOCKS = 16, 16, 2, 2
KERNELS = (1, 3, 5)
BATCH = 2
OWN_BUGS = {"paddle_fold_pad_front", "paddle_gelu_tanh"}
OTHER_BUGS = {"torch_softmax_over_batch", "torch_mark_cols_swapped"}


def sinusoid_table(length, dim):
    pos = np.arange(length, dtype="float64")[:, None]
    div = np.exp(np.arange(0, dim, 2, dtype="float64") * -(math.log(10000.0) / dim))
    table = np.zeros((length, dim), dtype="float64")
    table[:, 0::2] = np.sin(pos * div)
    table[:, 1::2] = np.cos(pos * div)
    return paddle.to_tensor(table.astype("float32"))


class DataEmbedding(nn.Layer):
    def __init__(self, c_in, d_model):
        super().__init__()
        self.value_conv = nn.Conv1D(c_in, d_model, 3, padding=1, padding_mode="circular", bias_attr=False,
                                    data_format="NLC")
        self.month_embed = nn.Embedding(13, d_model)
        self.day_embed = nn.Embedding(32, d_model)
        self.weekday_embed = nn.Embedding(7, d_model)
        self.hour_embed = nn.Embedding(24, d_model)

    def forward(self, x, x_mark):
        value = self.value_conv(x)  # [B, L, D], channels-last conv
        pos = sinusoid_table(x.shape[1], value.shape[-1]).unsqueeze(0)
        temporal = (self.month_embed(x_mark[:, :, 0]) + self.day_embed(x_mark[:, :, 1])
                    + self.weekday_embed(x_mark[:, :, 2]) + self.hour_embed(x_mark[:, :, 3]))
        return value + pos + temporal


class PeriodFold(nn.Layer):
    """[B, T, C] -> NHWC map [B, ceil(T / period), period, C] (zero tail padding)."""

    def __init__(self, pad_front=False):
        super().__init__()
        self.pad_front = pad_front

    def forward(self, x, period):
        b, t, c = x.shape
        rows = (t + period - 1) // period
        if rows * period != t:
            pad = paddle.zeros([b, rows * period - t, c], dtype=x.dtype)
            x = paddle.concat([pad, x] if self.pad_front else [x, pad], axis=1)
        return x.reshape([b, rows, period, c])


class InceptionBlock(nn.Layer):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.branches = nn.LayerList(
            [nn.Conv2D(c_in, c_out, k, padding=k // 2, data_format="NHWC") for k in KERNELS])

    def forward(self, x):
        return paddle.stack([branch(x) for branch in self.branches], axis=-1).mean(axis=-1)


class TimesBlock(nn.Layer):
    def __init__(self, gelu_tanh=False, pad_front=False):
        super().__init__()
        self.gelu_tanh = gelu_tanh
        self.fold = PeriodFold(pad_front)
        self.incep_in = InceptionBlock(D_MODEL, D_FF)
        self.incep_out = InceptionBlock(D_FF, D_MODEL)

    @staticmethod
    def _periods(x):
        spec = paddle.abs(paddle.fft.rfft(x, axis=1))  # [B, T//2+1, C]
        amp = spec.mean(axis=0).mean(axis=-1)
        amp[0] = 0.0
        _, top = paddle.topk(amp, TOP_K)
        top = top.numpy()
        periods = [int(x.shape[1] // int(f)) for f in top]
        weights = paddle.index_select(spec.mean(axis=-1), paddle.to_tensor(top), axis=1)  # [B, k]
        return periods, weights

    def forward(self, x):
        b, t, c = x.shape
        periods, weights = self._periods(x)
        outs = []
        for period in periods:
            grid = self.fold(x, period)
            h = self.incep_in(grid)
            h = F.gelu(h, approximate=self.gelu_tanh)
            h = self.incep_out(h)
            outs.append(h.reshape([b, -1, c])[:, :t, :])
        stacked = paddle.stack(outs, axis=-1)  # [B, T, C, k]
        w = F.softmax(weights, axis=1).reshape([b, 1, 1, len(periods)])
        return (stacked * w).sum(axis=-1) + x


class TimesNetForecaster(nn.Layer):
    def __init__(self, gelu_tanh=False, pad_front=False):
        super().__init__()
        self.blocks = nn.LayerList([TimesBlock(gelu_tanh, pad_front) for _ in range(N_BLOCKS)])
        self.norm = nn.LayerNorm(D_MODEL)
        self.embedding = DataEmbedding(ENC_IN, D_MODEL)
        self.predict_linear = nn.Linear(SEQ_LEN, SEQ_LEN + PRED_LEN)
        self.head = nn.Linear(D_MODEL, C_OUT)

    def forward(self, x_enc, x_mark):
        mean = x_enc.mean(axis=1, keepdim=True)
        x = x_enc - mean
        std = paddle.sqrt((x * x).mean(axis=1, keepdim=True) + 1e-5)  # x is centred: biased variance
        x = x / std
        h = self.embedding(x, x_mark)  # [B, 24, 16]
        h = self.predict_linear(h.transpose([0, 2, 1])).transpose([0, 2, 1])  # [B, 32, 16]
        for block in self.blocks:
            h = self.norm(block(h))
        y = self.head(h)  # [B, 32, 3]
        y = y * std + mean
        return y[:, -PRED_LEN:, :]


def _trained_look(m):
    rng = np.random.default_rng(23)
    m.norm.weight.set_value(rng.uniform(0.3, 0.6, D_MODEL).astype("float32"))
    m.norm.bias.set_value(rng.normal(0.0, 0.1, D_MODEL).astype("float32"))
    for tab in (m.embedding.month_embed, m.embedding.day_embed, m.embedding.weekday_embed, m.embedding.hour_embed):
        tab.weight.set_value(rng.normal(0.0, 0.3, tab.weight.shape).astype("float32"))
    # predict_linear near a damped seasonal-naive map (copy the input, continue 11 steps back), [in, out]
    w = rng.normal(0.0, 0.01, (SEQ_LEN, SEQ_LEN + PRED_LEN))
    for t in range(SEQ_LEN + PRED_LEN):
        src = t if t < SEQ_LEN else t - 11
        w[src, t] += 0.3
    m.predict_linear.weight.set_value(w.astype("float32"))
    m.predict_linear.bias.set_value(rng.normal(0.0, 0.05, SEQ_LEN + PRED_LEN).astype("float32"))
    for blk in m.blocks:
        for inc, gain in ((blk.incep_in, 3.0), (blk.incep_out, 1.0)):
            for conv in inc.branches:
                # trained first-stage kernels are ~3x the init scale (GELU inputs of order 1)
                conv.weight.set_value((conv.weight.numpy() * gain).astype("float32"))
                conv.bias.set_value(rng.normal(0.0, 0.1, conv.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_timesnet paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = TimesNetForecaster(gelu_tanh=bug == "paddle_gelu_tanh", pad_front=bug == "paddle_fold_pad_front")
    _trained_look(m)
    m.eval()
    return m


def _data():
    rng = np.random.default_rng(31)
    t = np.arange(SEQ_LEN, dtype="float64")
    x = np.empty((BATCH, SEQ_LEN, ENC_IN))
    for b in range(BATCH):
        for c in range(ENC_IN):
            # two seasonal components, 3 and 5 cycles per 32 steps (periods 10.67 and 6.4)
            x[b, :, c] = (rng.uniform(1.0, 2.0) * np.sin(2 * np.pi * 3 * t / 32 + rng.uniform(0, 6.28))
                          + rng.uniform(1.0, 2.0) * np.sin(2 * np.pi * 5 * t / 32 + rng.uniform(0, 6.28))
                          + rng.normal(0.0, 0.05) * t + rng.normal(0.0, 2.0) + 0.2 * rng.standard_normal(SEQ_LEN))
    mark = np.empty((BATCH, SEQ_LEN, 4), dtype="int64")
    for b in range(BATCH):
        start = int(rng.integers(0, 24))
        hours = start + np.arange(SEQ_LEN)
        day0, wd0, month = int(rng.integers(1, 20)), int(rng.integers(0, 7)), int(rng.integers(1, 13))
        mark[b, :, 0] = month
        mark[b, :, 1] = day0 + hours // 24
        mark[b, :, 2] = (wd0 + hours // 24) % 7
        mark[b, :, 3] = hours % 24
    return x.astype("float32"), mark


def inputs():
    x, mark = _data()
    return (paddle.to_tensor(x), paddle.to_tensor(mark)), {}


def loss(output):
    # forecast [2, 8, 3]
    return (output**2).mean()
