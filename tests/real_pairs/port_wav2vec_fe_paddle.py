"""Hand-written port, paddle side: a tiny wav2vec2-style speech front end + encoder (written by "person A").

Sizes: waveform [2, 1600] (raw samples), conv feature dim 24, hidden 32, 4 heads of 8, FFN 64,
2 post-norm transformer layers, LayerNorm / GroupNorm eps 1e-5. The model returns the last
hidden state [2, 39, 32].

Layout, in the style of HF / paddlenlp Wav2Vec2 ("group" feature-extractor norm, post-norm
encoder, i.e. do_stable_layer_norm=False):
- `feature_extractor.conv_layers`: 4 conv layers over the waveform [B, 1, 1600] (channels-first,
  paddle's default "NCL"), kernels (10, 3, 3, 2), strides (5, 2, 2, 2), no conv bias. Layer 0 is
  conv -> `layer_norm` (nn.GroupNorm(24 groups, 24 channels): each channel normalised over time)
  -> `activation` (nn.GELU); layers 1..3 are conv -> `activation`. 1600 -> 319 -> 159 -> 79 -> 39
  frames.
- `feature_projection`: `layer_norm` (24) -> `projection` Linear(24, 32) (weight [in, out]) ->
  `dropout`.
- `encoder.pos_conv_embed`: the convolutional relative positional embedding, a grouped
  nn.Conv1D(32, 32, kernel 32, padding 16, groups 4) working CHANNELS-LAST (data_format="NLC", so
  the [B, T, C] hidden states need no transpose), wrapped in paddle.nn.utils.weight_norm(dim=2):
  weight = weight_g * weight_v / ||weight_v||, the norm per kernel tap over the output and
  input-channel dims (weight_g [32], weight_v [32, 8, 32]; paddle keeps the recomputed `weight` as
  a buffer). The even kernel gives T + 1 frames: the last one is removed inline, then F.gelu.
- `encoder`: hidden + pos -> `layer_norm` -> `dropout` -> `layers` (LayerList of 2
  `EncoderLayer`): `attention` (hand-written: k_proj, v_proj, q_proj, out_proj registered in that
  order, q scaled by 8^-0.5, F.softmax), `dropout`, residual, `layer_norm`, `feed_forward`
  (`intermediate_dense` -> F.gelu -> `output_dense`), residual, `final_layer_norm`.

The torch side (port_wav2vec_fe_torch.py) was written independently: nn.Sequential conv blocks,
torch.nn.utils.parametrizations.weight_norm, channels-first pos conv, nn.MultiheadAttention.

Planted bugs on this side (PADIFF_BUG); the torch side's bug names are accepted and ignored, any
other name raises ValueError:
  paddle_wn_default_dim -> the positional conv is wrapped with paddle.nn.utils.weight_norm(conv)
                           without dim=2, i.e. the default dim=0: the norm is taken per OUTPUT
                           CHANNEL (weight_g [32]) instead of per kernel tap
  paddle_fe_gelu_tanh   -> the feature extractor's nn.GELU layers are built with
                           approximate=True (tanh approximation), precision-level
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

CONV_DIM, HIDDEN, HEADS, FFN, LAYERS = 24, 32, 4, 64, 2
CONV_KERNELS, CONV_STRIDES = (10, 3, 3, 2), (5, 2, 2, 2)
POS_KERNEL, POS_GROUPS = 32, 4
EPS = 1e-5
BATCH, SAMPLES = 2, 1600
OWN_BUGS = {"paddle_wn_default_dim", "paddle_fe_gelu_tanh"}
OTHER_BUGS = {"torch_groupnorm_one_group", "torch_pos_trim_first"}


class ConvLayer(nn.Layer):
    def __init__(self, layer_id, gelu_tanh=False):
        super().__init__()
        in_dim = 1 if layer_id == 0 else CONV_DIM
        self.conv = nn.Conv1D(in_dim, CONV_DIM, CONV_KERNELS[layer_id], stride=CONV_STRIDES[layer_id], bias_attr=False)
        if layer_id == 0:
            self.layer_norm = nn.GroupNorm(num_groups=CONV_DIM, num_channels=CONV_DIM, epsilon=EPS)
        else:
            self.layer_norm = None
        self.activation = nn.GELU(approximate=gelu_tanh)

    def forward(self, x):
        x = self.conv(x)
        if self.layer_norm is not None:
            x = self.layer_norm(x)
        return self.activation(x)


class FeatureExtractor(nn.Layer):
    def __init__(self, gelu_tanh=False):
        super().__init__()
        self.conv_layers = nn.LayerList([ConvLayer(i, gelu_tanh) for i in range(len(CONV_KERNELS))])

    def forward(self, input_values):
        hidden = input_values.unsqueeze(1)  # [B, 1, S]
        for conv_layer in self.conv_layers:
            hidden = conv_layer(hidden)
        return hidden  # [B, C, T]


class FeatureProjection(nn.Layer):
    def __init__(self):
        super().__init__()
        self.layer_norm = nn.LayerNorm(CONV_DIM, epsilon=EPS)
        self.projection = nn.Linear(CONV_DIM, HIDDEN)
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden):
        hidden = self.layer_norm(hidden)
        return self.dropout(self.projection(hidden))


class PositionalConvEmbedding(nn.Layer):
    def __init__(self, wn_default_dim=False):
        super().__init__()
        conv = nn.Conv1D(HIDDEN, HIDDEN, POS_KERNEL, padding=POS_KERNEL // 2, groups=POS_GROUPS, data_format="NLC")
        if wn_default_dim:
            self.conv = paddle.nn.utils.weight_norm(conv, name="weight")
        else:
            self.conv = paddle.nn.utils.weight_norm(conv, name="weight", dim=2)
        self.num_pad_remove = 1 if POS_KERNEL % 2 == 0 else 0

    def forward(self, hidden):  # [B, T, C]
        hidden = self.conv(hidden)  # [B, T + 1, C]
        if self.num_pad_remove > 0:
            hidden = hidden[:, : -self.num_pad_remove, :]
        return F.gelu(hidden)


class Attention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.head_dim = HIDDEN // HEADS
        self.scaling = self.head_dim**-0.5
        self.k_proj = nn.Linear(HIDDEN, HIDDEN)
        self.v_proj = nn.Linear(HIDDEN, HIDDEN)
        self.q_proj = nn.Linear(HIDDEN, HIDDEN)
        self.out_proj = nn.Linear(HIDDEN, HIDDEN)

    def _shape(self, x, bsz, tgt):
        return x.reshape([bsz, tgt, HEADS, self.head_dim]).transpose([0, 2, 1, 3])

    def forward(self, hidden):
        bsz, tgt, _ = hidden.shape
        q = self._shape(self.q_proj(hidden) * self.scaling, bsz, tgt)
        k = self._shape(self.k_proj(hidden), bsz, tgt)
        v = self._shape(self.v_proj(hidden), bsz, tgt)
        probs = F.softmax(paddle.matmul(q, k, transpose_y=True), axis=-1)
        out = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([bsz, tgt, HIDDEN])
        return self.out_proj(out)


class FeedForward(nn.Layer):
    def __init__(self):
        super().__init__()
        self.intermediate_dense = nn.Linear(HIDDEN, FFN)
        self.output_dense = nn.Linear(FFN, HIDDEN)

    def forward(self, hidden):
        return self.output_dense(F.gelu(self.intermediate_dense(hidden)))


class EncoderLayer(nn.Layer):
    def __init__(self):
        super().__init__()
        self.attention = Attention()
        self.dropout = nn.Dropout(0.1)
        self.layer_norm = nn.LayerNorm(HIDDEN, epsilon=EPS)
        self.feed_forward = FeedForward()
        self.final_layer_norm = nn.LayerNorm(HIDDEN, epsilon=EPS)

    def forward(self, hidden):
        residual = hidden
        hidden = residual + self.dropout(self.attention(hidden))
        hidden = self.layer_norm(hidden)
        hidden = hidden + self.feed_forward(hidden)
        return self.final_layer_norm(hidden)


class Encoder(nn.Layer):
    def __init__(self, wn_default_dim=False):
        super().__init__()
        self.pos_conv_embed = PositionalConvEmbedding(wn_default_dim)
        self.layer_norm = nn.LayerNorm(HIDDEN, epsilon=EPS)
        self.dropout = nn.Dropout(0.1)
        self.layers = nn.LayerList([EncoderLayer() for _ in range(LAYERS)])

    def forward(self, hidden):
        hidden = hidden + self.pos_conv_embed(hidden)
        hidden = self.dropout(self.layer_norm(hidden))
        for layer in self.layers:
            hidden = layer(hidden)
        return hidden


class Wav2Vec2Tiny(nn.Layer):
    def __init__(self, wn_default_dim=False, gelu_tanh=False):
        super().__init__()
        self.feature_extractor = FeatureExtractor(gelu_tanh)
        self.feature_projection = FeatureProjection()
        self.encoder = Encoder(wn_default_dim)

    def forward(self, input_values):
        features = self.feature_extractor(input_values).transpose([0, 2, 1])  # [B, T, C]
        hidden = self.feature_projection(features)
        return self.encoder(hidden)


def _init(m):
    """Non-trivial norm affines and a "trained" weight-norm gain (not just ||v||)."""
    rng = np.random.default_rng(3)
    for name, p in m.named_parameters():
        leaf = name.rsplit(".", 1)[-1]
        if "norm" in name and leaf == "weight":
            p.set_value(rng.normal(1.0, 0.1, p.shape).astype("float32"))
        elif "norm" in name and leaf == "bias":
            p.set_value(rng.normal(0.0, 0.1, p.shape).astype("float32"))
        elif leaf == "weight_g":
            p.set_value((p.numpy() * rng.uniform(0.6, 1.4, p.shape)).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_wav2vec_fe paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = Wav2Vec2Tiny(wn_default_dim=bug == "paddle_wn_default_dim", gelu_tanh=bug == "paddle_fe_gelu_tanh")
    _init(m)
    m.eval()
    return m


def _wave():
    rng = np.random.default_rng(21)
    t = np.arange(SAMPLES) / 16000.0
    rows = []
    for _ in range(BATCH):
        f = rng.uniform(100, 900, 3)
        w = sum(np.sin(2 * np.pi * fi * t + rng.uniform(0, 6.28)) for fi in f) + 0.3 * rng.standard_normal(SAMPLES)
        rows.append((w - w.mean()) / w.std())
    return np.stack(rows).astype("float32")


def inputs():
    return (paddle.to_tensor(_wave()),), {}


def loss(output):
    # last hidden state [2, 39, 32]
    return (output**2).mean()
