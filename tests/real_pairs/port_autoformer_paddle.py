"""Hand-written port, paddle side: a tiny Autoformer forecaster (written by "person A").

Sizes: 3 variables, input window 24, label length 16, forecast horizon 8, width 16, feed-forward
32, moving average kernel 5, top_k = int(1 * log 24) = 3 delays, one encoder block, one decoder
block, batch 2. Input: positional `x_enc` [2, 24, 3] (seasonal series of period 6 / period 8
with a trend and noise, numpy rng seed 36). Output: the forecast [2, 8, 3].

Math (both sides, Autoformer, eval mode):
- decomp(x) = (x - MA(x), MA(x)), MA = moving average of 5 steps over time with the first / last
  step replicated twice at the edges;
- seasonal_init / trend_init: the last 16 steps of the decomposed input, followed by 8 zeros /
  8 copies of the input mean;
- auto-correlation: corr = irfft(rfft(q) * conj(rfft(k))) over time, averaged over all 16
  channels -> [B, 24]; the top-3 delays tau_i per sample, weights softmax(corr[tau_i]); output
  sum_i w_i * roll(v, -tau_i) over time; then an output Linear;
- encoder block: x = decomp(x + AC(x)).season; x = decomp(x + FFN(x)).season; then
  LayerNorm minus its time mean;
- decoder block: x = x + AC(x); x, t1 = decomp; x = x + AC(x, enc); x, t2 = decomp;
  x, t3 = decomp(x + FFN(x)); trend += circular conv3(t1 + t2 + t3) (16 -> 3, no bias);
  then LayerNorm minus its time mean, Linear(16, 3);
- forecast = (trend + seasonal)[:, -8:].
FFN = Linear(16, 32, no bias) -> GELU (exact) -> Linear(32, 16, no bias).

Paddle idioms on this side:
- root `AutoformerLite`: `enc_token_conv`, `dec_token_conv` (nn.Conv1D(3, 16, 3, padding=1,
  padding_mode="circular", bias_attr=False, data_format="NLC")), `encoder_blocks` (LayerList),
  `enc_ln`, `decoder_blocks` (LayerList), `dec_ln` (nn.LayerNorm(16)), `head` nn.Linear(16, 3).
- NO decomposition module: a module-level helper `decompose(x, k)` computes the moving average
  with a CUMSUM over the replicated-edge series, inline in every forward that needs it; the
  "LayerNorm minus time mean" is inline after `enc_ln` / `dec_ln`.
- `AutoCorrBlock`: NO head split (the inference aggregation averages over all channels anyway);
  self-correlation has ONE fused `qkv` Linear(16, 48) (q | k | v columns), cross-correlation
  has `q_proj` Linear(16, 16) and ONE fused `kv_proj` Linear(16, 32) (k | v columns); then
  `out_proj`. The delay aggregation gathers with paddle.take_along_axis on (t + tau) mod L.
- feed-forward as Linears `ffn_up` / `ffn_down`, F.gelu inline; the decoder's trend projection
  `trend_proj` nn.Conv1D(16, 3, 3, padding=1, padding_mode="circular", bias_attr=False,
  data_format="NLC").
- model() gives the LayerNorms and biases trained-looking (seeded, non-identity) values.

The torch side (port_autoformer_torch.py) was written independently, close to the official
code: series_decomp / moving_avg modules around nn.AvgPool1d, separate q / k / v projections
and an inner AutoCorrelation module with a head split, Conv1d(k=1) feed-forward.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_corr_no_conj -> the correlation multiplies rfft(q) * rfft(k) without the complex
                         conjugate (a circular CONVOLUTION, not a correlation), so other delays
                         and weights are picked
  paddle_gelu_tanh    -> the feed-forward uses F.gelu(approximate=True) (tanh form) instead of
                         the exact erf GELU: a precision-level slip (<= 5e-4 per activation)
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

N_VARS, WIDTH, FF, HORIZON, LABEL, WINDOW = 3, 16, 32, 8, 16, 24
MA_KERNEL, TOPK_FACTOR = 5, 1
BATCH = 2
OWN_BUGS = {"paddle_corr_no_conj", "paddle_gelu_tanh"}
OTHER_BUGS = {"torch_agg_training_path", "torch_trend_proj_zero_pad"}


def decompose(x, k=MA_KERNEL):
    """x [B, L, C] -> (seasonal, trend); trend = k-step moving average with replicated edges."""
    half = (k - 1) // 2
    padded = paddle.concat([x[:, :1].expand([-1, half, -1]), x, x[:, -1:].expand([-1, half, -1])], axis=1)
    csum = paddle.cumsum(padded, axis=1)
    csum = paddle.concat([paddle.zeros_like(csum[:, :1]), csum], axis=1)
    trend = (csum[:, k:] - csum[:, :-k]) / k
    return x - trend, trend


def _season_norm(ln, x):
    x = ln(x)
    return x - x.mean(axis=1, keepdim=True)


class AutoCorrBlock(nn.Layer):
    def __init__(self, width, cross=False, no_conj=False):
        super().__init__()
        self.cross, self.no_conj = cross, no_conj
        if cross:
            self.q_proj = nn.Linear(width, width)
            self.kv_proj = nn.Linear(width, 2 * width)
        else:
            self.qkv = nn.Linear(width, 3 * width)
        self.out_proj = nn.Linear(width, width)

    def _correlate(self, q, k, v):
        # q, k, v: [B, L, D] (same L here: decoder length 24 = encoder length 24)
        length = q.shape[1]
        qf = paddle.fft.rfft(q, axis=1)
        kf = paddle.fft.rfft(k, axis=1)
        spec = qf * kf if self.no_conj else qf * paddle.conj(kf)
        corr = paddle.fft.irfft(spec, n=length, axis=1)  # [B, L (lag), D]
        score = corr.mean(axis=-1)  # [B, L]
        top_k = int(TOPK_FACTOR * math.log(length))
        weights, lags = paddle.topk(score, top_k, axis=-1)
        weights = F.softmax(weights, axis=-1)
        steps = paddle.arange(length, dtype="int64")
        out = paddle.zeros_like(v)
        for i in range(top_k):
            idx = (steps.unsqueeze(0) + lags[:, i:i + 1]) % length  # [B, L]
            idx = idx.unsqueeze(-1).expand(v.shape)
            out = out + paddle.take_along_axis(v, idx, axis=1) * weights[:, i].reshape([-1, 1, 1])
        return out

    def forward(self, x, memory=None):
        if self.cross:
            q = self.q_proj(x)
            k, v = paddle.split(self.kv_proj(memory), 2, axis=-1)
        else:
            q, k, v = paddle.split(self.qkv(x), 3, axis=-1)
        return self.out_proj(self._correlate(q, k, v))


class EncoderBlock(nn.Layer):
    def __init__(self, width, ff, no_conj=False, gelu_tanh=False):
        super().__init__()
        self.gelu_tanh = gelu_tanh
        self.attn = AutoCorrBlock(width, cross=False, no_conj=no_conj)
        self.ffn_up = nn.Linear(width, ff, bias_attr=False)
        self.ffn_down = nn.Linear(ff, width, bias_attr=False)

    def forward(self, x):
        x, _ = decompose(x + self.attn(x))
        y = self.ffn_down(F.gelu(self.ffn_up(x), approximate=self.gelu_tanh))
        x, _ = decompose(x + y)
        return x


class DecoderBlock(nn.Layer):
    def __init__(self, width, ff, n_out, no_conj=False, gelu_tanh=False):
        super().__init__()
        self.gelu_tanh = gelu_tanh
        self.self_attn = AutoCorrBlock(width, cross=False, no_conj=no_conj)
        self.cross_attn = AutoCorrBlock(width, cross=True, no_conj=no_conj)
        self.ffn_up = nn.Linear(width, ff, bias_attr=False)
        self.ffn_down = nn.Linear(ff, width, bias_attr=False)
        self.trend_proj = nn.Conv1D(width, n_out, 3, padding=1, padding_mode="circular", bias_attr=False,
                                    data_format="NLC")

    def forward(self, x, memory):
        x, t1 = decompose(x + self.self_attn(x))
        x, t2 = decompose(x + self.cross_attn(x, memory))
        y = self.ffn_down(F.gelu(self.ffn_up(x), approximate=self.gelu_tanh))
        x, t3 = decompose(x + y)
        return x, self.trend_proj(t1 + t2 + t3)


class AutoformerLite(nn.Layer):
    def __init__(self, no_conj=False, gelu_tanh=False):
        super().__init__()
        conv = dict(padding=1, padding_mode="circular", bias_attr=False, data_format="NLC")
        self.enc_token_conv = nn.Conv1D(N_VARS, WIDTH, 3, **conv)
        self.dec_token_conv = nn.Conv1D(N_VARS, WIDTH, 3, **conv)
        self.encoder_blocks = nn.LayerList([EncoderBlock(WIDTH, FF, no_conj, gelu_tanh)])
        self.enc_ln = nn.LayerNorm(WIDTH)
        self.decoder_blocks = nn.LayerList([DecoderBlock(WIDTH, FF, N_VARS, no_conj, gelu_tanh)])
        self.dec_ln = nn.LayerNorm(WIDTH)
        self.head = nn.Linear(WIDTH, N_VARS)

    def forward(self, x_enc):
        season, trend = decompose(x_enc)
        mean = x_enc.mean(axis=1, keepdim=True).expand([-1, HORIZON, -1])
        trend = paddle.concat([trend[:, -LABEL:], mean], axis=1)
        season = paddle.concat([season[:, -LABEL:], paddle.zeros_like(mean)], axis=1)

        memory = self.enc_token_conv(x_enc)
        for block in self.encoder_blocks:
            memory = block(memory)
        memory = _season_norm(self.enc_ln, memory)

        x = self.dec_token_conv(season)
        for block in self.decoder_blocks:
            x, residual_trend = block(x, memory)
            trend = trend + residual_trend
        x = self.head(_season_norm(self.dec_ln, x))
        return (trend + x)[:, -HORIZON:]


def _trained_look(m):
    rng = np.random.default_rng(362)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            layer.weight.set_value(rng.uniform(0.6, 1.4, WIDTH).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, WIDTH).astype("float32"))
        elif isinstance(layer, nn.Linear) and layer.bias is not None:
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_autoformer paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = AutoformerLite(no_conj=bug == "paddle_corr_no_conj", gelu_tanh=bug == "paddle_gelu_tanh")
    _trained_look(m)
    m.eval()
    return m


def _series():
    rng = np.random.default_rng(36)
    t = np.arange(WINDOW, dtype=np.float64)
    out = np.zeros((BATCH, WINDOW, N_VARS))
    for b, period in enumerate((6.0, 8.0)):
        for c in range(N_VARS):
            out[b, :, c] = (1.0 + 0.3 * c) * np.sin(2 * np.pi * t / period + 0.7 * c) + 0.05 * (c + 1) * t
    out += 0.2 * rng.standard_normal(out.shape)
    return out.astype("float32")


def inputs():
    return (paddle.to_tensor(_series()),), {}


def loss(output):
    # forecast [2, 8, 3]
    return (output**2).mean()
