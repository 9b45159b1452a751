"""Hand-written port, torch side: a tiny TimesNet long-term forecaster (written by "person B").

The same math as port_timesnet_paddle.py, re-implemented by hand in the style of the
Time-Series-Library (thuml) TimesNet code: inputs `x_enc` [2, 24, 3] float32 and `x_mark`
[2, 24, 4] int64 (month, day, weekday, hour), both positional; output the 8-step forecast
[2, 8, 3]. seq_len 24, pred_len 8, d_model 16, d_ff 16, top-k 2, 2 TimesBlocks, instance
normalisation with biased variance + 1e-5, projection 16 -> 3, de-normalisation.

Torch idioms on this side:
- root `TimesNet` registers `enc_embedding` (DataEmbedding), `predict_linear`
  (nn.Linear(24, 32), applied to the permuted [B, D, L] series), `model` (nn.ModuleList of
  `TimesBlock`) and `projection` (nn.Linear(16, 3)). There is no LayerNorm at the root: every
  TimesBlock owns its `layer_norm` and applies it to its own output.
- `DataEmbedding` registers `value_embedding` (TokenEmbedding: `tokenConv` nn.Conv1d(3, 16, 3,
  padding=1, padding_mode="circular", bias=False) on the permuted series),
  `position_embedding` (PositionalEmbedding with a [1, 64, 16] `pe` buffer) and
  `temporal_embedding` (TemporalEmbedding: ONE packed nn.Embedding `embed` of 13 + 32 + 7 + 24 =
  76 rows, month | day | weekday | hour, with an `offsets` buffer added to the marks, the four
  looked-up rows summed).
- `TimesBlock`: FFT_for_Period is a module-level function (torch.fft.rfft, torch.topk, periods
  as python ints); the fold (zero tail padding, reshape, permute to NCHW), the unfold, the
  softmax over the k amplitudes and the residual are inline in the forward; `conv` =
  nn.Sequential(Conv2d(16, 16, 5, padding=2), nn.GELU(), Conv2d(16, 16, 5, padding=2)): each
  inception block (the mean of parallel 1x1 / 3x3 / 5x5 convs) is folded into ONE 5x5 conv
  whose kernel is the mean of the zero-padded kernels and whose bias is the mean of the biases.
  The block ends with `layer_norm(res + x)`.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_softmax_over_batch -> the period weights are normalised with F.softmax(dim=0) (over the
                              batch) instead of dim=1 (over the k periods)
  torch_mark_cols_swapped  -> TemporalEmbedding reads the mark columns in the order (month,
                              weekday, day, hour): the day and weekday values look up each
                              other's segment of the packed table (no index error: the offsets
                              keep them inside the 76 rows)
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

SEQ_LEN, PRED_LEN, ENC_IN, C_OUT = 24, 8, 3, 3
D_MODEL, D_FF, TOP_K, E_LAYERS = 16, 16, 2, 2
BATCH = 2
OWN_BUGS = {"torch_softmax_over_batch", "torch_mark_cols_swapped"}
OTHER_BUGS = {"paddle_fold_pad_front", "paddle_gelu_tanh"}


class TokenEmbedding(nn.Module):
    def __init__(self, c_in, d_model):
        super().__init__()
        self.tokenConv = nn.Conv1d(c_in, d_model, kernel_size=3, padding=1, padding_mode="circular", bias=False)

    def forward(self, x):
        return self.tokenConv(x.permute(0, 2, 1)).transpose(1, 2)


class PositionalEmbedding(nn.Module):
    def __init__(self, d_model, max_len=64):
        super().__init__()
        pe = torch.zeros(max_len, d_model, dtype=torch.float32)
        position = torch.arange(0, max_len, dtype=torch.float32).unsqueeze(1)
        div_term = (torch.arange(0, d_model, 2, dtype=torch.float32) * -(math.log(10000.0) / d_model)).exp()
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0))

    def forward(self, x):
        return self.pe[:, : x.size(1)]


class TemporalEmbedding(nn.Module):
    SIZES = (13, 32, 7, 24)  # month, day, weekday, hour

    def __init__(self, d_model, cols_swapped=False):
        super().__init__()
        self.cols = [0, 2, 1, 3] if cols_swapped else [0, 1, 2, 3]
        self.embed = nn.Embedding(sum(self.SIZES), d_model)
        offsets = torch.tensor([0, 13, 45, 52], dtype=torch.long)
        self.register_buffer("offsets", offsets)

    def forward(self, x_mark):
        idx = x_mark.long()[:, :, self.cols] + self.offsets
        return self.embed(idx).sum(dim=2)


class DataEmbedding(nn.Module):
    def __init__(self, c_in, d_model, cols_swapped=False):
        super().__init__()
        self.value_embedding = TokenEmbedding(c_in, d_model)
        self.position_embedding = PositionalEmbedding(d_model)
        self.temporal_embedding = TemporalEmbedding(d_model, cols_swapped)

    def forward(self, x, x_mark):
        return self.value_embedding(x) + self.position_embedding(x) + self.temporal_embedding(x_mark)


def FFT_for_Period(x, k=2):
    xf = torch.fft.rfft(x, dim=1)
    frequency_list = abs(xf).mean(0).mean(-1)
    frequency_list[0] = 0
    _, top_list = torch.topk(frequency_list, k)
    top_list = top_list.detach().cpu().numpy()
    period = x.shape[1] // top_list
    return period, abs(xf).mean(-1)[:, top_list]


class TimesBlock(nn.Module):
    def __init__(self, softmax_dim=1):
        super().__init__()
        self.seq_len, self.pred_len, self.k = SEQ_LEN, PRED_LEN, TOP_K
        self.softmax_dim = softmax_dim
        self.conv = nn.Sequential(
            nn.Conv2d(D_MODEL, D_FF, kernel_size=5, padding=2),
            nn.GELU(),
            nn.Conv2d(D_FF, D_MODEL, kernel_size=5, padding=2),
        )
        self.layer_norm = nn.LayerNorm(D_MODEL)

    def forward(self, x):
        B, T, N = x.size()
        period_list, period_weight = FFT_for_Period(x, self.k)
        res = []
        for i in range(self.k):
            period = int(period_list[i])
            total = self.seq_len + self.pred_len
            if total % period != 0:
                length = (total // period + 1) * period
                padding = torch.zeros([x.shape[0], length - total, x.shape[2]], dtype=x.dtype, device=x.device)
                out = torch.cat([x, padding], dim=1)
            else:
                length = total
                out = x
            out = out.reshape(B, length // period, period, N).permute(0, 3, 1, 2).contiguous()
            out = self.conv(out)
            out = out.permute(0, 2, 3, 1).reshape(B, -1, N)
            res.append(out[:, :total, :])
        res = torch.stack(res, dim=-1)
        period_weight = F.softmax(period_weight, dim=self.softmax_dim)
        period_weight = period_weight.unsqueeze(1).unsqueeze(1).repeat(1, T, N, 1)
        res = torch.sum(res * period_weight, -1)
        return self.layer_norm(res + x)


class TimesNet(nn.Module):
    def __init__(self, softmax_dim=1, cols_swapped=False):
        super().__init__()
        self.enc_embedding = DataEmbedding(ENC_IN, D_MODEL, cols_swapped)
        self.predict_linear = nn.Linear(SEQ_LEN, SEQ_LEN + PRED_LEN)
        self.model = nn.ModuleList([TimesBlock(softmax_dim) for _ in range(E_LAYERS)])
        self.projection = nn.Linear(D_MODEL, C_OUT, bias=True)

    def forward(self, x_enc, x_mark_enc):
        means = x_enc.mean(1, keepdim=True).detach()
        x_enc = x_enc - means
        stdev = torch.sqrt(torch.var(x_enc, dim=1, keepdim=True, unbiased=False) + 1e-5)
        x_enc = x_enc / stdev
        enc_out = self.enc_embedding(x_enc, x_mark_enc)
        enc_out = self.predict_linear(enc_out.permute(0, 2, 1)).permute(0, 2, 1)
        for i in range(len(self.model)):
            enc_out = self.model[i](enc_out)
        dec_out = self.projection(enc_out)
        dec_out = dec_out * stdev[:, 0, :].unsqueeze(1).repeat(1, SEQ_LEN + PRED_LEN, 1)
        dec_out = dec_out + means[:, 0, :].unsqueeze(1).repeat(1, SEQ_LEN + PRED_LEN, 1)
        return dec_out[:, -PRED_LEN:, :]


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_timesnet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = TimesNet(softmax_dim=0 if bug == "torch_softmax_over_batch" else 1,
                 cols_swapped=bug == "torch_mark_cols_swapped")
    return m.eval()


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
    return (torch.from_numpy(x), torch.from_numpy(mark)), {}


def loss(output):
    # forecast [2, 8, 3]
    return (output**2).mean()
