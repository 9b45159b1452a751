"""Hand-written port, paddle side: a Whisper-style audio encoder with a pooled classification head (written by "person A").

Input: one log-mel spectrogram `input_features` [1, 8, 40] ([batch, mels, frames], positional,
numpy rng seed 45, standard normal). Output: class logits [1, 4].

The model (HuggingFace WhisperForAudioClassification layout, shrunk):
  encoder:  x = gelu(conv1(x))                 Conv1D(8, 16, 3, padding=1)            [1, 16, 40]
            x = gelu(conv2(x))                 Conv1D(16, 16, 3, stride=2, padding=1) [1, 16, 20]
            x = x^T + sinusoids(20, 16)                                               [1, 20, 16]
            2 pre-LN transformer layers (width 16, 2 heads of 8, FFN 64, exact GELU)
            final LayerNorm
  head:     projector Linear(16, 8) on every frame, mean over the 20 frames, classifier
            Linear(8, 4)
sinusoids(T, C) = [sin(t * f_i) | cos(t * f_i)], f_i = exp(-i * ln(10000) / (C/2 - 1)),
i = 0 .. C/2 - 1 (OpenAI Whisper's table). Attention: q = q_proj(x) * head_dim^-0.5, k =
k_proj(x) (no bias), v = v_proj(x), softmax(q k^T) v, out_proj.

Paddle idioms on this side:
- root `WhisperAudioClassifier`: `encoder`, `projector`, `classifier`; the mean pool is inline.
- `WhisperEncoder`: `conv1`, `conv2` (nn.Conv1D, data_format="NCL", weight [out, in, 3]), the
  positional table as a persistable BUFFER `embed_positions` [20, 16] (built once in
  __init__ by the module helper `sinusoids`), `layers` (LayerList, iterated), `layer_norm`.
  F.gelu is inline after each conv.
- `WhisperEncoderLayer` (HF naming): `self_attn`, `self_attn_layer_norm`, `fc1`, `fc2`,
  `final_layer_norm`; the FFN's F.gelu is inline in the layer forward (no MLP module).
- `WhisperAttention`: SEPARATE `k_proj` (bias_attr=False), `v_proj`, `q_proj`, `out_proj`
  (registered in that order, HF style); q is scaled by head_dim^-0.5 after the projection.
- model() gives every LayerNorm trained-looking weights / biases and every Linear / Conv1D bias
  a non-zero value (seeded: paddle's default bias init is zero).

The torch side (port_whisper_enc_torch.py) was written independently, OpenAI-Whisper / BEiT
style: Conv2d with a height-1 kernel for the stem, the positional table computed inline in
every forward, one fused qkv weight with separate q / v bias vectors (k bias fixed at zero),
q and k EACH scaled by head_dim^-0.25, an nn.Sequential MLP with an nn.GELU module, and
mean-pooling BEFORE the projection.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_gelu_tanh       -> the FFN's activation is F.gelu(approximate=True) (tanh GELU)
                            instead of the exact erf GELU, in every layer (precision-level)
  paddle_attn_scale_dmodel -> the attention scales q by embed_dim^-0.5 (16^-0.5 = 0.25)
                            instead of head_dim^-0.5 (8^-0.5 = 0.354)
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

N_MELS, N_FRAMES, D_MODEL, N_HEADS, FFN, N_LAYERS = 8, 40, 16, 2, 64, 2
N_CTX = N_FRAMES // 2
PROJ_DIM, N_CLASSES = 8, 4
LN_EPS = 1e-5
OWN_BUGS = {"paddle_gelu_tanh", "paddle_attn_scale_dmodel"}
OTHER_BUGS = {"torch_sinusoid_increment", "torch_residual_normed"}


def sinusoids(length, channels, max_timescale=10000.0):
    log_timescale_increment = math.log(max_timescale) / (channels // 2 - 1)
    inv_timescales = np.exp(-log_timescale_increment * np.arange(channels // 2, dtype="float64"))
    scaled_time = np.arange(length, dtype="float64")[:, None] * inv_timescales[None, :]
    return np.concatenate([np.sin(scaled_time), np.cos(scaled_time)], axis=1).astype("float32")


class WhisperAttention(nn.Layer):
    def __init__(self, embed_dim, num_heads, scale_by_dmodel=False):
        super().__init__()
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.head_dim = embed_dim // num_heads
        self.scaling = (embed_dim if scale_by_dmodel else self.head_dim) ** -0.5
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias_attr=False)
        self.v_proj = nn.Linear(embed_dim, embed_dim)
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def _shape(self, t, bsz, seq):
        return t.reshape([bsz, seq, self.num_heads, self.head_dim]).transpose([0, 2, 1, 3])

    def forward(self, hidden_states):
        bsz, seq, _ = hidden_states.shape
        q = self._shape(self.q_proj(hidden_states) * self.scaling, bsz, seq)
        k = self._shape(self.k_proj(hidden_states), bsz, seq)
        v = self._shape(self.v_proj(hidden_states), bsz, seq)
        attn = F.softmax(paddle.matmul(q, k, transpose_y=True), axis=-1)
        out = paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([bsz, seq, self.embed_dim])
        return self.out_proj(out)


class WhisperEncoderLayer(nn.Layer):
    def __init__(self, bug=""):
        super().__init__()
        self.tanh_gelu = bug == "paddle_gelu_tanh"
        self.self_attn = WhisperAttention(D_MODEL, N_HEADS, scale_by_dmodel=bug == "paddle_attn_scale_dmodel")
        self.self_attn_layer_norm = nn.LayerNorm(D_MODEL, epsilon=LN_EPS)
        self.fc1 = nn.Linear(D_MODEL, FFN)
        self.fc2 = nn.Linear(FFN, D_MODEL)
        self.final_layer_norm = nn.LayerNorm(D_MODEL, epsilon=LN_EPS)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.self_attn(self.self_attn_layer_norm(hidden_states))
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.fc1(self.final_layer_norm(hidden_states))
        hidden_states = F.gelu(hidden_states, approximate=self.tanh_gelu)
        hidden_states = self.fc2(hidden_states)
        return residual + hidden_states


class WhisperEncoder(nn.Layer):
    def __init__(self, bug=""):
        super().__init__()
        self.conv1 = nn.Conv1D(N_MELS, D_MODEL, 3, padding=1, data_format="NCL")
        self.conv2 = nn.Conv1D(D_MODEL, D_MODEL, 3, stride=2, padding=1, data_format="NCL")
        self.register_buffer("embed_positions", paddle.to_tensor(sinusoids(N_CTX, D_MODEL)), persistable=True)
        self.layers = nn.LayerList([WhisperEncoderLayer(bug) for _ in range(N_LAYERS)])
        self.layer_norm = nn.LayerNorm(D_MODEL, epsilon=LN_EPS)

    def forward(self, input_features):
        x = F.gelu(self.conv1(input_features))
        x = F.gelu(self.conv2(x))
        x = x.transpose([0, 2, 1])  # [B, T, C]
        x = x + self.embed_positions
        for layer in self.layers:
            x = layer(x)
        return self.layer_norm(x)


class WhisperAudioClassifier(nn.Layer):
    def __init__(self, bug=""):
        super().__init__()
        self.encoder = WhisperEncoder(bug)
        self.projector = nn.Linear(D_MODEL, PROJ_DIM)
        self.classifier = nn.Linear(PROJ_DIM, N_CLASSES)

    def forward(self, input_features):
        hidden = self.projector(self.encoder(input_features))  # [B, T, 8]
        pooled = hidden.mean(axis=1)
        return self.classifier(pooled)


def _trained_look(m):
    rng = np.random.default_rng(4501)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            layer.weight.set_value(rng.uniform(0.6, 1.4, layer.weight.shape).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, layer.bias.shape).astype("float32"))
        elif isinstance(layer, (nn.Linear, nn.Conv1D)) and layer.bias is not None:
            layer.bias.set_value(rng.normal(0.0, 0.2, layer.bias.shape).astype("float32"))
    for layer in m.encoder.layers:  # trained FFN weights: wider than the Xavier init
        layer.fc1.weight.set_value(layer.fc1.weight.numpy() * 1.5)
        layer.fc2.weight.set_value(layer.fc2.weight.numpy() * 2.0)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_whisper_enc paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = WhisperAudioClassifier(bug if bug in OWN_BUGS else "")
    _trained_look(m)
    m.eval()
    return m


def _features():
    rng = np.random.default_rng(45)
    return rng.standard_normal((1, N_MELS, N_FRAMES)).astype("float32")


def inputs():
    return (paddle.to_tensor(_features()),), {}


def loss(output):
    # class logits [1, 4]
    return (output**2).mean()
