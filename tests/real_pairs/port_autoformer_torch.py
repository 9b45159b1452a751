"""Hand-written port, torch side: a tiny Autoformer forecaster (written by "person B", close to the official thuml code).

Sizes: 3 variables, input window seq_len 24, label_len 16, pred_len 8, d_model 16, 2 heads,
d_ff 32, moving average kernel 5, factor 1 (top_k = int(log 24) = 3 delays), 1 encoder layer,
1 decoder layer, batch 2. Input: positional `x_enc` [2, 24, 3] (seasonal series of period 6 /
period 8 with a trend and noise, numpy rng seed 36). Output: the forecast [2, 8, 3].

Torch idioms on this side (the official module structure):
- root `Autoformer`: `decomp` (series_decomp -> `moving_avg` -> `avg` nn.AvgPool1d(5, 1, 0),
  edges replicated by concatenating copies of the first / last step), `enc_embedding` /
  `dec_embedding` (DataEmbedding_wo_pos -> `value_embedding` TokenEmbedding -> `tokenConv`
  nn.Conv1d(3, 16, 3, padding=1, padding_mode="circular", bias=False), plus a `dropout`),
  `encoder` (`attn_layers` ModuleList of EncoderLayer, `norm` my_Layernorm -> `layernorm`),
  `decoder` (`layers` ModuleList of DecoderLayer, `norm` my_Layernorm, `projection`
  nn.Linear(16, 3)).
- every decomposition is a `series_decomp` module call (`decomp1`, `decomp2`, `decomp3` in the
  layers).
- `AutoCorrelationLayer`: SEPARATE `query_projection`, `key_projection`, `value_projection`,
  `out_projection` Linears; q / k / v viewed as [B, L, H, E]; the child `inner_correlation`
  (`AutoCorrelation`) does rfft / irfft over time, the mean over heads and channels, top-k
  delays and the aggregation by `torch.gather` on the time-doubled values
  (time_delay_agg_inference in eval mode).
- feed-forward: `conv1` / `conv2` nn.Conv1d(k=1, bias=False), F.gelu inline.
- DecoderLayer `projection`: nn.Conv1d(16, 3, 3, padding=1, padding_mode="circular",
  bias=False) mapping the accumulated trend of the layer to the 3 variables.

The paddle side (port_autoformer_paddle.py) was written independently: decompositions inline
(cumsum moving average), no head split, a fused qkv Linear (self) and a fused kv Linear (cross),
Linears for the feed-forward.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_agg_training_path  -> AutoCorrelation always uses time_delay_agg_training (top-k delays
                              chosen ONCE for the whole batch, torch.roll) instead of the
                              per-sample time_delay_agg_inference in eval mode
  torch_trend_proj_zero_pad -> the decoder layer's trend `projection` conv is built with the
                              default padding_mode="zeros" instead of "circular"
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

ENC_IN, C_OUT, D_MODEL, N_HEADS, D_FF = 3, 3, 16, 2, 32
SEQ_LEN, LABEL_LEN, PRED_LEN = 24, 16, 8
MOVING_AVG, FACTOR = 5, 1
BATCH = 2
OWN_BUGS = {"torch_agg_training_path", "torch_trend_proj_zero_pad"}
OTHER_BUGS = {"paddle_corr_no_conj", "paddle_gelu_tanh"}


class moving_avg(nn.Module):
    def __init__(self, kernel_size, stride):
        super().__init__()
        self.kernel_size = kernel_size
        self.avg = nn.AvgPool1d(kernel_size=kernel_size, stride=stride, padding=0)

    def forward(self, x):
        front = x[:, 0:1, :].repeat(1, (self.kernel_size - 1) // 2, 1)
        end = x[:, -1:, :].repeat(1, (self.kernel_size - 1) // 2, 1)
        x = torch.cat([front, x, end], dim=1)
        x = self.avg(x.permute(0, 2, 1))
        return x.permute(0, 2, 1)


class series_decomp(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.moving_avg = moving_avg(kernel_size, stride=1)

    def forward(self, x):
        moving_mean = self.moving_avg(x)
        res = x - moving_mean
        return res, moving_mean


class my_Layernorm(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.layernorm = nn.LayerNorm(channels)

    def forward(self, x):
        x_hat = self.layernorm(x)
        bias = torch.mean(x_hat, dim=1).unsqueeze(1).repeat(1, x.shape[1], 1)
        return x_hat - bias


class TokenEmbedding(nn.Module):
    def __init__(self, c_in, d_model):
        super().__init__()
        self.tokenConv = nn.Conv1d(c_in, d_model, kernel_size=3, padding=1, padding_mode="circular", bias=False)

    def forward(self, x):
        return self.tokenConv(x.permute(0, 2, 1)).transpose(1, 2)


class DataEmbedding_wo_pos(nn.Module):
    def __init__(self, c_in, d_model, dropout=0.1):
        super().__init__()
        self.value_embedding = TokenEmbedding(c_in, d_model)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, x):
        return self.dropout(self.value_embedding(x))


class AutoCorrelation(nn.Module):
    def __init__(self, factor=1, attention_dropout=0.1, always_training_agg=False):
        super().__init__()
        self.factor = factor
        self.dropout = nn.Dropout(attention_dropout)
        self.always_training_agg = always_training_agg

    def time_delay_agg_training(self, values, corr):
        head, channel, length = values.shape[1], values.shape[2], values.shape[3]
        top_k = int(self.factor * math.log(length))
        mean_value = torch.mean(torch.mean(corr, dim=1), dim=1)
        index = torch.topk(torch.mean(mean_value, dim=0), top_k, dim=-1)[1]
        weights = torch.stack([mean_value[:, index[i]] for i in range(top_k)], dim=-1)
        tmp_corr = torch.softmax(weights, dim=-1)
        delays_agg = torch.zeros_like(values).float()
        for i in range(top_k):
            pattern = torch.roll(values, -int(index[i]), -1)
            delays_agg = delays_agg + pattern * (
                tmp_corr[:, i].unsqueeze(1).unsqueeze(1).unsqueeze(1).repeat(1, head, channel, length)
            )
        return delays_agg

    def time_delay_agg_inference(self, values, corr):
        batch, head, channel, length = values.shape
        init_index = torch.arange(length).unsqueeze(0).unsqueeze(0).unsqueeze(0).repeat(batch, head, channel, 1)
        top_k = int(self.factor * math.log(length))
        mean_value = torch.mean(torch.mean(corr, dim=1), dim=1)
        weights, delay = torch.topk(mean_value, top_k, dim=-1)
        tmp_corr = torch.softmax(weights, dim=-1)
        tmp_values = values.repeat(1, 1, 1, 2)
        delays_agg = torch.zeros_like(values).float()
        for i in range(top_k):
            tmp_delay = init_index + delay[:, i].unsqueeze(1).unsqueeze(1).unsqueeze(1).repeat(1, head, channel, length)
            pattern = torch.gather(tmp_values, dim=-1, index=tmp_delay)
            delays_agg = delays_agg + pattern * (
                tmp_corr[:, i].unsqueeze(1).unsqueeze(1).unsqueeze(1).repeat(1, head, channel, length)
            )
        return delays_agg

    def forward(self, queries, keys, values, attn_mask=None):
        _B, L, _H, _E = queries.shape
        _, S, _, _D = values.shape
        if L > S:
            zeros = torch.zeros_like(queries[:, : (L - S), :]).float()
            values = torch.cat([values, zeros], dim=1)
            keys = torch.cat([keys, zeros], dim=1)
        else:
            values = values[:, :L, :, :]
            keys = keys[:, :L, :, :]
        q_fft = torch.fft.rfft(queries.permute(0, 2, 3, 1).contiguous(), dim=-1)
        k_fft = torch.fft.rfft(keys.permute(0, 2, 3, 1).contiguous(), dim=-1)
        res = q_fft * torch.conj(k_fft)
        corr = torch.fft.irfft(res, dim=-1)
        if self.training or self.always_training_agg:
            V = self.time_delay_agg_training(values.permute(0, 2, 3, 1).contiguous(), corr).permute(0, 3, 1, 2)
        else:
            V = self.time_delay_agg_inference(values.permute(0, 2, 3, 1).contiguous(), corr).permute(0, 3, 1, 2)
        return V.contiguous(), None


class AutoCorrelationLayer(nn.Module):
    def __init__(self, correlation, d_model, n_heads):
        super().__init__()
        d_keys = d_values = d_model // n_heads
        self.inner_correlation = correlation
        self.query_projection = nn.Linear(d_model, d_keys * n_heads)
        self.key_projection = nn.Linear(d_model, d_keys * n_heads)
        self.value_projection = nn.Linear(d_model, d_values * n_heads)
        self.out_projection = nn.Linear(d_values * n_heads, d_model)
        self.n_heads = n_heads

    def forward(self, queries, keys, values, attn_mask=None):
        B, L, _ = queries.shape
        _, S, _ = keys.shape
        H = self.n_heads
        queries = self.query_projection(queries).view(B, L, H, -1)
        keys = self.key_projection(keys).view(B, S, H, -1)
        values = self.value_projection(values).view(B, S, H, -1)
        out, attn = self.inner_correlation(queries, keys, values, attn_mask)
        out = out.view(B, L, -1)
        return self.out_projection(out), attn


class EncoderLayer(nn.Module):
    def __init__(self, attention, d_model, d_ff, moving_avg=25, dropout=0.1, activation="gelu"):
        super().__init__()
        self.attention = attention
        self.conv1 = nn.Conv1d(in_channels=d_model, out_channels=d_ff, kernel_size=1, bias=False)
        self.conv2 = nn.Conv1d(in_channels=d_ff, out_channels=d_model, kernel_size=1, bias=False)
        self.decomp1 = series_decomp(moving_avg)
        self.decomp2 = series_decomp(moving_avg)
        self.dropout = nn.Dropout(dropout)
        self.activation = F.relu if activation == "relu" else F.gelu

    def forward(self, x, attn_mask=None):
        new_x, attn = self.attention(x, x, x, attn_mask=attn_mask)
        x = x + self.dropout(new_x)
        x, _ = self.decomp1(x)
        y = x
        y = self.dropout(self.activation(self.conv1(y.transpose(-1, 1))))
        y = self.dropout(self.conv2(y).transpose(-1, 1))
        res, _ = self.decomp2(x + y)
        return res, attn


class Encoder(nn.Module):
    def __init__(self, attn_layers, norm_layer=None):
        super().__init__()
        self.attn_layers = nn.ModuleList(attn_layers)
        self.norm = norm_layer

    def forward(self, x, attn_mask=None):
        attns = []
        for attn_layer in self.attn_layers:
            x, attn = attn_layer(x, attn_mask=attn_mask)
            attns.append(attn)
        if self.norm is not None:
            x = self.norm(x)
        return x, attns


class DecoderLayer(nn.Module):
    def __init__(self, self_attention, cross_attention, d_model, c_out, d_ff=None, moving_avg=25, dropout=0.1,
                 activation="gelu", trend_padding_mode="circular"):
        super().__init__()
        d_ff = d_ff or 4 * d_model
        self.self_attention = self_attention
        self.cross_attention = cross_attention
        self.conv1 = nn.Conv1d(in_channels=d_model, out_channels=d_ff, kernel_size=1, bias=False)
        self.conv2 = nn.Conv1d(in_channels=d_ff, out_channels=d_model, kernel_size=1, bias=False)
        self.decomp1 = series_decomp(moving_avg)
        self.decomp2 = series_decomp(moving_avg)
        self.decomp3 = series_decomp(moving_avg)
        self.dropout = nn.Dropout(dropout)
        self.projection = nn.Conv1d(in_channels=d_model, out_channels=c_out, kernel_size=3, stride=1, padding=1,
                                    padding_mode=trend_padding_mode, bias=False)
        self.activation = F.relu if activation == "relu" else F.gelu

    def forward(self, x, cross, x_mask=None, cross_mask=None):
        x = x + self.dropout(self.self_attention(x, x, x, attn_mask=x_mask)[0])
        x, trend1 = self.decomp1(x)
        x = x + self.dropout(self.cross_attention(x, cross, cross, attn_mask=cross_mask)[0])
        x, trend2 = self.decomp2(x)
        y = x
        y = self.dropout(self.activation(self.conv1(y.transpose(-1, 1))))
        y = self.dropout(self.conv2(y).transpose(-1, 1))
        x, trend3 = self.decomp3(x + y)
        residual_trend = trend1 + trend2 + trend3
        residual_trend = self.projection(residual_trend.permute(0, 2, 1)).transpose(1, 2)
        return x, residual_trend


class Decoder(nn.Module):
    def __init__(self, layers, norm_layer=None, projection=None):
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.norm = norm_layer
        self.projection = projection

    def forward(self, x, cross, x_mask=None, cross_mask=None, trend=None):
        for layer in self.layers:
            x, residual_trend = layer(x, cross, x_mask=x_mask, cross_mask=cross_mask)
            trend = trend + residual_trend
        if self.norm is not None:
            x = self.norm(x)
        if self.projection is not None:
            x = self.projection(x)
        return x, trend


class Autoformer(nn.Module):
    def __init__(self, always_training_agg=False, trend_padding_mode="circular"):
        super().__init__()
        self.seq_len, self.label_len, self.pred_len = SEQ_LEN, LABEL_LEN, PRED_LEN
        self.decomp = series_decomp(MOVING_AVG)
        self.enc_embedding = DataEmbedding_wo_pos(ENC_IN, D_MODEL)
        self.dec_embedding = DataEmbedding_wo_pos(ENC_IN, D_MODEL)

        def corr_layer():
            return AutoCorrelationLayer(AutoCorrelation(FACTOR, 0.1, always_training_agg), D_MODEL, N_HEADS)

        self.encoder = Encoder(
            [EncoderLayer(corr_layer(), D_MODEL, D_FF, moving_avg=MOVING_AVG, activation="gelu")],
            norm_layer=my_Layernorm(D_MODEL),
        )
        self.decoder = Decoder(
            [DecoderLayer(corr_layer(), corr_layer(), D_MODEL, C_OUT, D_FF, moving_avg=MOVING_AVG, activation="gelu",
                          trend_padding_mode=trend_padding_mode)],
            norm_layer=my_Layernorm(D_MODEL),
            projection=nn.Linear(D_MODEL, C_OUT, bias=True),
        )

    def forward(self, x_enc):
        mean = torch.mean(x_enc, dim=1).unsqueeze(1).repeat(1, self.pred_len, 1)
        zeros = torch.zeros([x_enc.shape[0], self.pred_len, x_enc.shape[2]], device=x_enc.device)
        seasonal_init, trend_init = self.decomp(x_enc)
        trend_init = torch.cat([trend_init[:, -self.label_len:, :], mean], dim=1)
        seasonal_init = torch.cat([seasonal_init[:, -self.label_len:, :], zeros], dim=1)
        enc_out = self.enc_embedding(x_enc)
        enc_out, _ = self.encoder(enc_out)
        dec_out = self.dec_embedding(seasonal_init)
        seasonal_part, trend_part = self.decoder(dec_out, enc_out, trend=trend_init)
        dec_out = trend_part + seasonal_part
        return dec_out[:, -self.pred_len:, :]


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_autoformer torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = Autoformer(
        always_training_agg=bug == "torch_agg_training_path",
        trend_padding_mode="zeros" if bug == "torch_trend_proj_zero_pad" else "circular",
    )
    return m.eval()


def _series():
    rng = np.random.default_rng(36)
    t = np.arange(SEQ_LEN, dtype=np.float64)
    out = np.zeros((BATCH, SEQ_LEN, ENC_IN))
    for b, period in enumerate((6.0, 8.0)):
        for c in range(ENC_IN):
            out[b, :, c] = (1.0 + 0.3 * c) * np.sin(2 * np.pi * t / period + 0.7 * c) + 0.05 * (c + 1) * t
    out += 0.2 * rng.standard_normal(out.shape)
    return out.astype("float32")


def inputs():
    return (torch.from_numpy(_series()),), {}


def loss(output):
    # forecast [2, 8, 3]
    return (output**2).mean()
