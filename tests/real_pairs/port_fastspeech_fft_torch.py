"""Hand-written port, torch side: a tiny FastSpeech-style text-to-mel model (written by "person B").

The same math as port_fastspeech_fft_paddle.py, re-implemented by hand in the style of the
xcmyz FastSpeech / ming024 FastSpeech2 pytorch code: `src_seq` [2, 8] int64 and fixed integer
`duration_target` [2, 8] (rows sum to 20) -> (mel [2, 20, 20], pitch prediction [2, 8]).
Width 32, 2 heads, FFT conv filter 64 with kernels (3, 1), 2 encoder FFT blocks, a pitch
variance predictor (conv3-ReLU-LN x2 + Linear) whose prediction is embedded (1 -> 32) and
added, a length regulator expanding each token by its target duration, sinusoidal positions
again, 1 decoder FFT block and a mel Linear(32, 20). Post-LN FFT blocks, LayerNorm eps 1e-5.

Torch idioms on this side:
- root `FastSpeech`: `encoder` (Encoder), `variance_adaptor` (VarianceAdaptor), `decoder`
  (Decoder), `mel_linear`.
- `Encoder`: `src_word_emb` nn.Embedding, the persistent buffer `position_enc` [64, 32] (sin on
  even, cos on odd channels, from a numpy helper), `layer_stack` (ModuleList of FFTBlock); adds
  `position_enc[:L]` inline. `Decoder` has its own `position_enc` buffer and `layer_stack`.
- `FFTBlock`: `slf_attn` (`MultiHeadAttention`: wraps `attn` = nn.MultiheadAttention(32, 2,
  batch_first=True) (fused in_proj_weight [96, 32] q|k|v) and `layer_norm`, and does the
  residual + LayerNorm ITSELF), `pos_ffn` (`PositionwiseFeedForward`: `w_1` Conv1d(32, 64, 3,
  padding=1), `w_2` Conv1d(64, 32, 1), `layer_norm`; transposes to NCL, F.relu inline, residual
  + LayerNorm inside).
- `VarianceAdaptor`: `pitch_predictor` (`VariancePredictor`: `conv_layer` nn.Sequential of
  an OrderedDict conv1d_1 (a `Conv` wrapper that transposes around its `conv` Conv1d), relu_1,
  layer_norm_1, dropout_1, conv1d_2, relu_2, layer_norm_2, dropout_2; then `linear_layer`
  Linear(32, 1)), `pitch_embedding` nn.Conv1d(1, 32, 1) on the [B, 1, L] prediction, and
  `length_regulator` (`LengthRegulator`: builds a [B, T, L] 0/1 alignment from the cumulative
  durations and applies it with torch.bmm).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_pe_half     -> the sinusoid table helper returns a float16 tensor (to "save memory"), so
                       both position buffers carry fp16-rounded positions, cast back to fp32
                       when added (precision-level)
  torch_lr_boundary -> LengthRegulator's alignment uses `t <= cum_end` instead of `t < cum_end`,
                       so the frame at every token boundary mixes (sums) two tokens
"""
import os
from collections import OrderedDict

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

N_SRC_VOCAB, D_WORD_VEC, N_HEAD, D_INNER, FFT_KERNEL = 24, 32, 2, 64, (3, 1)
N_ENC_LAYERS, N_DEC_LAYERS, VP_FILTER, VP_KERNEL, N_MEL = 2, 1, 32, 3, 20
MAX_SEQ_LEN = 64
BATCH = 2
OWN_BUGS = {"torch_pe_half", "torch_lr_boundary"}
OTHER_BUGS = {"paddle_attn_scale_dmodel", "paddle_pitch_relu"}


def get_sinusoid_encoding_table(n_position, d_hid, half=False):
    def cal_angle(position, hid_idx):
        return position / np.power(10000, 2 * (hid_idx // 2) / d_hid)

    table = np.array([[cal_angle(pos, j) for j in range(d_hid)] for pos in range(n_position)])
    table[:, 0::2] = np.sin(table[:, 0::2])
    table[:, 1::2] = np.cos(table[:, 1::2])
    return torch.tensor(table, dtype=torch.float16 if half else torch.float32)


class MultiHeadAttention(nn.Module):
    def __init__(self, n_head, d_model):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, n_head, batch_first=True)
        self.layer_norm = nn.LayerNorm(d_model)

    def forward(self, x):
        residual = x
        out, _ = self.attn(x, x, x, need_weights=False)
        return self.layer_norm(out + residual)


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_in, d_hid, kernel_size):
        super().__init__()
        self.w_1 = nn.Conv1d(d_in, d_hid, kernel_size=kernel_size[0], padding=(kernel_size[0] - 1) // 2)
        self.w_2 = nn.Conv1d(d_hid, d_in, kernel_size=kernel_size[1], padding=(kernel_size[1] - 1) // 2)
        self.layer_norm = nn.LayerNorm(d_in)

    def forward(self, x):
        residual = x
        out = self.w_2(F.relu(self.w_1(x.transpose(1, 2)))).transpose(1, 2)
        return self.layer_norm(out + residual)


class FFTBlock(nn.Module):
    def __init__(self, d_model, n_head, d_inner, kernel_size):
        super().__init__()
        self.slf_attn = MultiHeadAttention(n_head, d_model)
        self.pos_ffn = PositionwiseFeedForward(d_model, d_inner, kernel_size)

    def forward(self, x):
        return self.pos_ffn(self.slf_attn(x))


class Encoder(nn.Module):
    def __init__(self, pe_half=False):
        super().__init__()
        self.src_word_emb = nn.Embedding(N_SRC_VOCAB, D_WORD_VEC)
        self.register_buffer("position_enc", get_sinusoid_encoding_table(MAX_SEQ_LEN, D_WORD_VEC, pe_half))
        self.layer_stack = nn.ModuleList(
            [FFTBlock(D_WORD_VEC, N_HEAD, D_INNER, FFT_KERNEL) for _ in range(N_ENC_LAYERS)])

    def forward(self, src_seq):
        length = src_seq.shape[1]
        enc_output = self.src_word_emb(src_seq) + self.position_enc[:length].unsqueeze(0).float()
        for enc_layer in self.layer_stack:
            enc_output = enc_layer(enc_output)
        return enc_output


class Decoder(nn.Module):
    def __init__(self, pe_half=False):
        super().__init__()
        self.register_buffer("position_enc", get_sinusoid_encoding_table(MAX_SEQ_LEN, D_WORD_VEC, pe_half))
        self.layer_stack = nn.ModuleList(
            [FFTBlock(D_WORD_VEC, N_HEAD, D_INNER, FFT_KERNEL) for _ in range(N_DEC_LAYERS)])

    def forward(self, x):
        dec_output = x + self.position_enc[: x.shape[1]].unsqueeze(0).float()
        for dec_layer in self.layer_stack:
            dec_output = dec_layer(dec_output)
        return dec_output


class Conv(nn.Module):
    """Conv1d on [B, L, C] tensors."""

    def __init__(self, in_channels, out_channels, kernel_size=1, padding=0):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size=kernel_size, padding=padding)

    def forward(self, x):
        return self.conv(x.contiguous().transpose(1, 2)).contiguous().transpose(1, 2)


class VariancePredictor(nn.Module):
    def __init__(self, input_size, filter_size, kernel):
        super().__init__()
        self.conv_layer = nn.Sequential(OrderedDict([
            ("conv1d_1", Conv(input_size, filter_size, kernel_size=kernel, padding=(kernel - 1) // 2)),
            ("relu_1", nn.ReLU()),
            ("layer_norm_1", nn.LayerNorm(filter_size)),
            ("dropout_1", nn.Dropout(0.5)),
            ("conv1d_2", Conv(filter_size, filter_size, kernel_size=kernel, padding=1)),
            ("relu_2", nn.ReLU()),
            ("layer_norm_2", nn.LayerNorm(filter_size)),
            ("dropout_2", nn.Dropout(0.5)),
        ]))
        self.linear_layer = nn.Linear(filter_size, 1)

    def forward(self, encoder_output):
        out = self.linear_layer(self.conv_layer(encoder_output))
        return out.squeeze(-1)


class LengthRegulator(nn.Module):
    def __init__(self, boundary_bug=False):
        super().__init__()
        self.boundary_bug = boundary_bug

    def forward(self, x, duration):
        ends = torch.cumsum(duration, dim=1)  # [B, L]
        starts = ends - duration
        total = int(ends[:, -1].max())
        t = torch.arange(total, device=x.device).view(1, total, 1)
        if self.boundary_bug:
            alignment = (t >= starts.unsqueeze(1)) & (t <= ends.unsqueeze(1))
        else:
            alignment = (t >= starts.unsqueeze(1)) & (t < ends.unsqueeze(1))
        return torch.bmm(alignment.to(x.dtype), x)  # [B, T, C]


class VarianceAdaptor(nn.Module):
    def __init__(self, boundary_bug=False):
        super().__init__()
        self.pitch_predictor = VariancePredictor(D_WORD_VEC, VP_FILTER, VP_KERNEL)
        self.pitch_embedding = nn.Conv1d(1, D_WORD_VEC, kernel_size=1)
        self.length_regulator = LengthRegulator(boundary_bug)

    def forward(self, x, duration_target):
        pitch_prediction = self.pitch_predictor(x)
        x = x + self.pitch_embedding(pitch_prediction.unsqueeze(1)).transpose(1, 2)
        return self.length_regulator(x, duration_target), pitch_prediction


class FastSpeech(nn.Module):
    def __init__(self, pe_half=False, boundary_bug=False):
        super().__init__()
        self.encoder = Encoder(pe_half)
        self.variance_adaptor = VarianceAdaptor(boundary_bug)
        self.decoder = Decoder(pe_half)
        self.mel_linear = nn.Linear(D_WORD_VEC, N_MEL)

    def forward(self, src_seq, duration_target):
        enc_output = self.encoder(src_seq)
        output, pitch_prediction = self.variance_adaptor(enc_output, duration_target)
        mel = self.mel_linear(self.decoder(output))
        return mel, pitch_prediction


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_fastspeech_fft torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = FastSpeech(pe_half=bug == "torch_pe_half", boundary_bug=bug == "torch_lr_boundary")
    return m.eval()


def _data():
    src_seq = np.random.default_rng(44).integers(1, N_SRC_VOCAB, (BATCH, 8)).astype("int64")
    duration_target = np.array([[2, 3, 1, 4, 2, 3, 2, 3], [3, 1, 2, 2, 4, 3, 1, 4]], dtype="int64")
    return src_seq, duration_target


def inputs():
    src_seq, duration_target = _data()
    return (torch.from_numpy(src_seq), torch.from_numpy(duration_target)), {}


def loss(output):
    # mel [2, 20, 20] (output[0]); pitch prediction [2, 8] (output[1])
    return (output[0] ** 2).mean()
