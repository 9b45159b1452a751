"""Hand-written port, paddle side: a tiny FastSpeech-style text-to-mel model (written by "person A").

Inputs (positional): `tokens` [2, 8] int64 (numpy rng seed 44, ids 1..23) and `durations`
[2, 8] int64, FIXED integer frame counts per token, both rows summing to 20 (they are an input:
the length regulator never uses the predicted values, so the graph is deterministic).
Output: (mel [2, 20, 20], pitch [2, 8]); mel is the first element.

Sizes: vocab 24, width 32, 2 heads of 16, FFT conv filter 64 (kernel 3 then kernel 1), 2 encoder
FFT blocks, 1 decoder FFT block, variance predictor filter 32 (kernel 3), 20 mel bins, all
LayerNorm eps 1e-5. The math:
  x = emb(tokens) + PE[0:8]                          PE[p, 2i] = sin(p / 10000^(2i/32)),
                                                     PE[p, 2i+1] = cos(p / 10000^(2i/32))
  FFT block (post-LN): x = LN(x + MHA(x)); x = LN(x + W2 relu(conv3(x)))
  pitch = Linear(LN(relu(conv3(LN(relu(conv3(x))))))) squeezed to [B, 8]
  x = x + pitch * w_pe + b_pe                        (a 1 -> 32 pitch embedding)
  x = length-regulate(x, durations)                  token i repeated durations[b, i] times
  x = x + PE[0:20]; one decoder FFT block; mel = Linear(32, 20)

Paddle idioms on this side:
- root `FastSpeechMini` registers `token_embedding`, `pos_encoding`, `encoder_blocks`
  (LayerList of `FFTBlock`), `pitch_predictor`, `pitch_embed` (nn.Linear(1, 32)),
  `length_regulator`, `decoder_blocks` (LayerList, 1 block), `to_mel`, in that order; the pitch
  embedding is added inline in the root forward.
- `SinusoidalPositionalEncoding` (no parameters, no buffer) builds the table with numpy in every
  forward and adds it; ONE instance, called twice (encoder tokens, then decoder frames).
- `FFTBlock`: `self_attn` (ESPnet-style `MultiHeadedAttention`: separate `linear_q`,
  `linear_k`, `linear_v`, `linear_out`; returns the attention output only), `norm1`, `ffn`
  (`ConvFeedForward`: `conv` nn.Conv1D(32, 64, 3, padding=1, data_format="NLC"), F.relu inline,
  `proj` nn.Linear(64, 32) as the kernel-1 conv), `norm2`; residuals and norms in the block.
- `VariancePredictor`: `convs` (LayerList of nn.Conv1D(..., 3, padding=1, data_format="NLC")),
  `norms` (LayerList of LayerNorm), F.relu inline, `proj` nn.Linear(32, 1).
- `LengthRegulator` (no parameters): paddle.repeat_interleave per batch item, then stack.
- model() gives every LayerNorm trained-looking weights / biases, the Linear / Conv1D biases
  non-zero values (seeded), the embedding N(0, 0.5) rows, and the pitch head an output offset
  of -1.8 (the pitch is normalised, so the predictions straddle 0).

The torch side (port_fastspeech_fft_torch.py) was written independently (xcmyz / ming024
FastSpeech style): Encoder / VarianceAdaptor / Decoder containers, position tables as buffers,
nn.MultiheadAttention with a fused in_proj, residual + LayerNorm INSIDE the attention and FFN
modules, Conv1d in NCL layout, a Sequential predictor and an alignment-matrix length regulator.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_attn_scale_dmodel -> MultiHeadedAttention scales the scores by 1 / sqrt(d_model = 32)
                              instead of 1 / sqrt(d_head = 16)
  paddle_pitch_relu        -> the variance predictor clamps its output with a ReLU (as an
                              inference-time duration predictor does), so negative pitch values
                              become 0
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, D_MODEL, N_HEADS, D_FFN, KERNEL = 24, 32, 2, 64, 3
N_ENC, N_DEC, VP_FILTER, N_MELS = 2, 1, 32, 20
BATCH, SEQ = 2, 8
OWN_BUGS = {"paddle_attn_scale_dmodel", "paddle_pitch_relu"}
OTHER_BUGS = {"torch_pe_half", "torch_lr_boundary"}


class SinusoidalPositionalEncoding(nn.Layer):
    def __init__(self, d_model):
        super().__init__()
        self.d_model = d_model

    def forward(self, x):
        length = x.shape[1]
        pos = np.arange(length, dtype="float64")[:, None]
        i = np.arange(self.d_model)[None, :]
        angle = pos / np.power(10000.0, 2 * (i // 2) / self.d_model)
        table = np.where(i % 2 == 0, np.sin(angle), np.cos(angle)).astype("float32")
        return x + paddle.to_tensor(table).unsqueeze(0)


class MultiHeadedAttention(nn.Layer):
    def __init__(self, n_feat, n_head, scale_by_model=False):
        super().__init__()
        self.h, self.d_k = n_head, n_feat // n_head
        self.scale = 1.0 / math.sqrt(n_feat if scale_by_model else self.d_k)
        self.linear_q = nn.Linear(n_feat, n_feat)
        self.linear_k = nn.Linear(n_feat, n_feat)
        self.linear_v = nn.Linear(n_feat, n_feat)
        self.linear_out = nn.Linear(n_feat, n_feat)

    def forward(self, x):
        b, t = x.shape[0], x.shape[1]
        q = self.linear_q(x).reshape([b, t, self.h, self.d_k]).transpose([0, 2, 1, 3])
        k = self.linear_k(x).reshape([b, t, self.h, self.d_k]).transpose([0, 2, 1, 3])
        v = self.linear_v(x).reshape([b, t, self.h, self.d_k]).transpose([0, 2, 1, 3])
        scores = paddle.matmul(q, k, transpose_y=True) * self.scale
        attn = F.softmax(scores, axis=-1)
        ctx = paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([b, t, self.h * self.d_k])
        return self.linear_out(ctx)


class ConvFeedForward(nn.Layer):
    def __init__(self, d_model, d_ffn, kernel):
        super().__init__()
        self.conv = nn.Conv1D(d_model, d_ffn, kernel, padding=kernel // 2, data_format="NLC")
        self.proj = nn.Linear(d_ffn, d_model)

    def forward(self, x):
        return self.proj(F.relu(self.conv(x)))


class FFTBlock(nn.Layer):
    def __init__(self, **attn_kw):
        super().__init__()
        self.self_attn = MultiHeadedAttention(D_MODEL, N_HEADS, **attn_kw)
        self.norm1 = nn.LayerNorm(D_MODEL)
        self.ffn = ConvFeedForward(D_MODEL, D_FFN, KERNEL)
        self.norm2 = nn.LayerNorm(D_MODEL)

    def forward(self, x):
        x = self.norm1(x + self.self_attn(x))
        return self.norm2(x + self.ffn(x))


class VariancePredictor(nn.Layer):
    def __init__(self, idim, n_chans, kernel, n_layers=2, relu_out=False):
        super().__init__()
        self.relu_out = relu_out
        self.convs = nn.LayerList([
            nn.Conv1D(idim if i == 0 else n_chans, n_chans, kernel, padding=kernel // 2, data_format="NLC")
            for i in range(n_layers)
        ])
        self.norms = nn.LayerList([nn.LayerNorm(n_chans) for _ in range(n_layers)])
        self.proj = nn.Linear(n_chans, 1)

    def forward(self, x):
        for conv, norm in zip(self.convs, self.norms):
            x = norm(F.relu(conv(x)))
        out = self.proj(x)
        if self.relu_out:
            out = F.relu(out)
        return out.squeeze(-1)  # [B, L]


class LengthRegulator(nn.Layer):
    def forward(self, x, durations):
        outs = [paddle.repeat_interleave(x[b], durations[b], axis=0) for b in range(x.shape[0])]
        return paddle.stack(outs, axis=0)


class FastSpeechMini(nn.Layer):
    def __init__(self, attn_scale_by_model=False, pitch_relu=False):
        super().__init__()
        self.token_embedding = nn.Embedding(VOCAB, D_MODEL)
        self.pos_encoding = SinusoidalPositionalEncoding(D_MODEL)
        self.encoder_blocks = nn.LayerList([FFTBlock(scale_by_model=attn_scale_by_model) for _ in range(N_ENC)])
        self.pitch_predictor = VariancePredictor(D_MODEL, VP_FILTER, KERNEL, relu_out=pitch_relu)
        self.pitch_embed = nn.Linear(1, D_MODEL)
        self.length_regulator = LengthRegulator()
        self.decoder_blocks = nn.LayerList([FFTBlock(scale_by_model=attn_scale_by_model) for _ in range(N_DEC)])
        self.to_mel = nn.Linear(D_MODEL, N_MELS)

    def forward(self, tokens, durations):
        x = self.pos_encoding(self.token_embedding(tokens))
        for block in self.encoder_blocks:
            x = block(x)
        pitch = self.pitch_predictor(x)
        x = x + self.pitch_embed(pitch.unsqueeze(-1))
        x = self.length_regulator(x, durations)
        x = self.pos_encoding(x)
        for block in self.decoder_blocks:
            x = block(x)
        return self.to_mel(x), pitch


def _trained_look(m):
    rng = np.random.default_rng(144)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.7, 1.3, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
        elif isinstance(layer, (nn.Linear, nn.Conv1D)) and layer.bias is not None:
            layer.bias.set_value(rng.normal(0.0, 0.2, layer.bias.shape).astype("float32"))
    m.token_embedding.weight.set_value(rng.normal(0.0, 0.5, (VOCAB, D_MODEL)).astype("float32"))
    # the pitch target is normalised (zero mean): a trained predictor's output offset centres it
    m.pitch_predictor.proj.bias.set_value(np.array([-1.8], dtype="float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_fastspeech_fft paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = FastSpeechMini(attn_scale_by_model=bug == "paddle_attn_scale_dmodel", pitch_relu=bug == "paddle_pitch_relu")
    _trained_look(m)
    m.eval()
    return m


def _data():
    tokens = np.random.default_rng(44).integers(1, VOCAB, (BATCH, SEQ)).astype("int64")
    durations = np.array([[2, 3, 1, 4, 2, 3, 2, 3], [3, 1, 2, 2, 4, 3, 1, 4]], dtype="int64")
    return tokens, durations


def inputs():
    tokens, durations = _data()
    return (paddle.to_tensor(tokens), paddle.to_tensor(durations)), {}


def loss(output):
    # mel [2, 20, 20] (output[0]); pitch [2, 8] (output[1])
    return (output[0] ** 2).mean()
