"""Hand-written port, torch side: a small Informer-style time-series encoder (written by "person B").

The same model as port_informer_paddle.py, re-implemented by hand in the layout of the original
Informer code (zhouhaoyi/Informer2020, encoder only, ProbSparse attention made deterministic):
inputs `x_enc` [2, 24, 5] float32 and `x_mark` [2, 24, 4] int64 (month, day, weekday, hour),
output [2, 12, 5].

Torch idioms on this side:
- root `Informer`: `enc_embedding` (DataEmbedding), `encoder` (Encoder), `projection`
  Linear(32, 5).
- `DataEmbedding` = `value_embedding` (TokenEmbedding: `tokenConv` nn.Conv1d(5, 32, 3,
  padding=1, padding_mode="circular", bias=False), the circular padding happens INSIDE the conv
  module) + `position_embedding` (PositionalEmbedding: a registered `pe` BUFFER [1, 64, 32],
  sliced to the sequence length) + `temporal_embedding` (TemporalEmbedding: `hour_embed`,
  `weekday_embed`, `day_embed`, `month_embed`, each a FixedEmbedding whose `emb` nn.Embedding
  holds a frozen sinusoidal table, requires_grad=False).
- `Encoder`: `attn_layers` (ModuleList of EncoderLayer), `conv_layers` (ModuleList of
  ConvLayer), `norm` (LayerNorm); zips the two lists, then runs the last attention layer.
- `EncoderLayer`: `attention` (AttentionLayer, called with (x, x, x)), `conv1`
  nn.Conv1d(32, 64, 1), `conv2` nn.Conv1d(64, 32, 1) (the feed-forward as 1x1 convs over
  [B, C, L]), `norm1`, `norm2`; F.gelu inline.
- `AttentionLayer`: `inner_attention` (ProbAttention, no parameters, gets [B, L, H, 8] q / k / v
  and returns [B, L, H, 8]), separate `query_projection`, `key_projection`,
  `value_projection`, `out_projection`.
- `ProbAttention`: the sparsity measure M = max - sum / L_K on Q K^T over all keys, torch.topk
  (unsorted), the reduced queries gathered by advanced indexing, the initial context (mean of V,
  expanded and cloned) overwritten at the selected rows.
- `ConvLayer`: `downConv` nn.Conv1d(32, 32, 3, padding=1, padding_mode="circular"), `norm`
  nn.BatchNorm1d(32), `activation` nn.ELU(), `maxPool` nn.MaxPool1d(3, 2, 1).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_token_zero_pad      -> TokenEmbedding's tokenConv is built with padding=1 but without
                               padding_mode="circular": zero padding, so only the first and the
                               last step of the token embedding change
  torch_init_context_cumsum -> ProbAttention is built with mask_flag=True (the decoder's
                               setting): the non-selected queries get the CUMULATIVE SUM of V
                               over the sequence instead of its mean
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

ENC_IN, D_MODEL, N_HEADS, D_FF, C_OUT, E_LAYERS, FACTOR = 5, 32, 4, 64, 5, 2, 2
BATCH, SEQ_LEN, MAX_LEN = 2, 24, 64
OWN_BUGS = {"torch_token_zero_pad", "torch_init_context_cumsum"}
OTHER_BUGS = {"paddle_sparsity_no_div", "paddle_bn_eps_1e3"}


class TokenEmbedding(nn.Module):
    def __init__(self, c_in, d_model, zero_pad=False):
        super().__init__()
        if zero_pad:
            self.tokenConv = nn.Conv1d(c_in, d_model, kernel_size=3, padding=1, bias=False)
        else:
            self.tokenConv = nn.Conv1d(c_in, d_model, kernel_size=3, padding=1, padding_mode="circular", bias=False)

    def forward(self, x):
        return self.tokenConv(x.permute(0, 2, 1)).transpose(1, 2)


class PositionalEmbedding(nn.Module):
    def __init__(self, d_model, max_len=MAX_LEN):
        super().__init__()
        pe = torch.zeros(max_len, d_model).float()
        position = torch.arange(0, max_len).float().unsqueeze(1)
        div_term = (torch.arange(0, d_model, 2).float() * -(math.log(10000.0) / d_model)).exp()
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0))

    def forward(self, x):
        return self.pe[:, : x.size(1)]


class FixedEmbedding(nn.Module):
    def __init__(self, c_in, d_model):
        super().__init__()
        w = torch.zeros(c_in, d_model).float()
        position = torch.arange(0, c_in).float().unsqueeze(1)
        div_term = (torch.arange(0, d_model, 2).float() * -(math.log(10000.0) / d_model)).exp()
        w[:, 0::2] = torch.sin(position * div_term)
        w[:, 1::2] = torch.cos(position * div_term)
        self.emb = nn.Embedding(c_in, d_model)
        self.emb.weight = nn.Parameter(w, requires_grad=False)

    def forward(self, x):
        return self.emb(x).detach()


class TemporalEmbedding(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.hour_embed = FixedEmbedding(24, d_model)
        self.weekday_embed = FixedEmbedding(7, d_model)
        self.day_embed = FixedEmbedding(32, d_model)
        self.month_embed = FixedEmbedding(13, d_model)

    def forward(self, x):
        x = x.long()
        hour_x = self.hour_embed(x[:, :, 3])
        weekday_x = self.weekday_embed(x[:, :, 2])
        day_x = self.day_embed(x[:, :, 1])
        month_x = self.month_embed(x[:, :, 0])
        return hour_x + weekday_x + day_x + month_x


class DataEmbedding(nn.Module):
    def __init__(self, c_in, d_model, zero_pad=False):
        super().__init__()
        self.value_embedding = TokenEmbedding(c_in, d_model, zero_pad)
        self.position_embedding = PositionalEmbedding(d_model)
        self.temporal_embedding = TemporalEmbedding(d_model)

    def forward(self, x, x_mark):
        return self.value_embedding(x) + self.position_embedding(x) + self.temporal_embedding(x_mark)


class ProbAttention(nn.Module):
    def __init__(self, mask_flag=False, factor=FACTOR):
        super().__init__()
        self.mask_flag, self.factor = mask_flag, factor

    def _get_initial_context(self, V, L_Q):
        B, H, _, D = V.shape
        if not self.mask_flag:
            V_sum = V.mean(dim=-2)
            return V_sum.unsqueeze(-2).expand(B, H, L_Q, D).clone()
        return V.cumsum(dim=-2)

    def forward(self, queries, keys, values):
        B, L_Q, H, D = queries.shape
        L_K = keys.shape[1]
        queries, keys, values = queries.transpose(2, 1), keys.transpose(2, 1), values.transpose(2, 1)
        u = min(self.factor * int(np.ceil(np.log(L_Q))), L_Q)
        Q_K = torch.matmul(queries, keys.transpose(-2, -1))  # every key (no random sampling)
        M = Q_K.max(-1)[0] - torch.div(Q_K.sum(-1), L_K)
        M_top = M.topk(u, sorted=False)[1]
        b_idx = torch.arange(B)[:, None, None]
        h_idx = torch.arange(H)[None, :, None]
        Q_reduce = queries[b_idx, h_idx, M_top, :]  # [B, H, u, D]
        scores_top = torch.matmul(Q_reduce, keys.transpose(-2, -1)) * (1.0 / math.sqrt(D))
        context = self._get_initial_context(values, L_Q)
        attn = torch.softmax(scores_top, dim=-1)
        context[b_idx, h_idx, M_top, :] = torch.matmul(attn, values).type_as(context)
        return context.transpose(2, 1).contiguous()


class AttentionLayer(nn.Module):
    def __init__(self, attention, d_model, n_heads):
        super().__init__()
        d_keys = d_model // n_heads
        self.inner_attention = attention
        self.query_projection = nn.Linear(d_model, d_keys * n_heads)
        self.key_projection = nn.Linear(d_model, d_keys * n_heads)
        self.value_projection = nn.Linear(d_model, d_keys * n_heads)
        self.out_projection = nn.Linear(d_keys * n_heads, d_model)
        self.n_heads = n_heads

    def forward(self, queries, keys, values):
        B, L, _ = queries.shape
        S, H = keys.shape[1], self.n_heads
        queries = self.query_projection(queries).view(B, L, H, -1)
        keys = self.key_projection(keys).view(B, S, H, -1)
        values = self.value_projection(values).view(B, S, H, -1)
        out = self.inner_attention(queries, keys, values).view(B, L, -1)
        return self.out_projection(out)


class EncoderLayer(nn.Module):
    def __init__(self, attention, d_model, d_ff):
        super().__init__()
        self.attention = attention
        self.conv1 = nn.Conv1d(d_model, d_ff, kernel_size=1)
        self.conv2 = nn.Conv1d(d_ff, d_model, kernel_size=1)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, x):
        x = x + self.attention(x, x, x)
        y = x = self.norm1(x)
        y = F.gelu(self.conv1(y.transpose(-1, 1)))
        y = self.conv2(y).transpose(-1, 1)
        return self.norm2(x + y)


class ConvLayer(nn.Module):
    def __init__(self, c_in):
        super().__init__()
        self.downConv = nn.Conv1d(c_in, c_in, kernel_size=3, padding=1, padding_mode="circular")
        self.norm = nn.BatchNorm1d(c_in)
        self.activation = nn.ELU()
        self.maxPool = nn.MaxPool1d(kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        x = self.downConv(x.permute(0, 2, 1))
        x = self.activation(self.norm(x))
        return self.maxPool(x).transpose(1, 2)


class Encoder(nn.Module):
    def __init__(self, attn_layers, conv_layers, norm_layer):
        super().__init__()
        self.attn_layers = nn.ModuleList(attn_layers)
        self.conv_layers = nn.ModuleList(conv_layers)
        self.norm = norm_layer

    def forward(self, x):
        for attn_layer, conv_layer in zip(self.attn_layers, self.conv_layers):
            x = conv_layer(attn_layer(x))
        x = self.attn_layers[-1](x)
        return self.norm(x)


class Informer(nn.Module):
    def __init__(self, zero_pad=False, mask_flag=False):
        super().__init__()
        self.enc_embedding = DataEmbedding(ENC_IN, D_MODEL, zero_pad)
        self.encoder = Encoder(
            [
                EncoderLayer(AttentionLayer(ProbAttention(mask_flag), D_MODEL, N_HEADS), D_MODEL, D_FF)
                for _ in range(E_LAYERS)
            ],
            [ConvLayer(D_MODEL) for _ in range(E_LAYERS - 1)],
            nn.LayerNorm(D_MODEL),
        )
        self.projection = nn.Linear(D_MODEL, C_OUT)

    def forward(self, x_enc, x_mark_enc):
        enc_out = self.enc_embedding(x_enc, x_mark_enc)
        enc_out = self.encoder(enc_out)
        return self.projection(enc_out)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_informer torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = Informer(zero_pad=bug == "torch_token_zero_pad", mask_flag=bug == "torch_init_context_cumsum")
    return m.eval()


def _series():
    rng = np.random.default_rng(31)
    t = np.arange(SEQ_LEN, dtype=np.float64)
    x = np.stack([np.sin(2 * np.pi * t / p + ph) for p, ph in zip((24, 12, 8, 6, 24), (0.0, 0.5, 1.0, 1.5, 2.0))], -1)
    x = np.broadcast_to(x, (BATCH, SEQ_LEN, ENC_IN)) + 0.3 * rng.standard_normal((BATCH, SEQ_LEN, ENC_IN))
    hours = np.array([[17 + t_ for t_ in range(SEQ_LEN)], [5 + t_ for t_ in range(SEQ_LEN)]])
    day0, month, weekday0 = np.array([[29], [14]]), np.array([[2], [7]]), np.array([[4], [0]])
    mark = np.stack(
        [np.broadcast_to(month, hours.shape), day0 + hours // 24, (weekday0 + hours // 24) % 7, hours % 24], -1
    )
    return x.astype("float32"), mark.astype("int64")


def inputs():
    x, mark = _series()
    return (torch.from_numpy(x), torch.from_numpy(mark)), {}


def loss(output):
    # forecast-style outputs [2, 12, 5]
    return (output**2).mean()
