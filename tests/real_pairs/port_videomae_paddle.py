"""Hand-written port, paddle side: a tiny VideoMAE encoder for classification (inference, no masking),
written by "person A" (HuggingFace-like layout).

Input: one positional video batch [2, 3, 4, 16, 16] (B, C, T, H, W; numpy rng seed 41, standard
normal). Output: logits [2, 5].

Architecture (both sides):
  tubelet embedding  tubelet 2 x patch 4 x 4 (3 -> 32): 2 x 4 x 4 = 32 tokens in (t, h, w) order
  position           + the fixed sinusoid table of VideoMAE: pos / 10000^(2 (j // 2) / 32),
                     sin on even j, cos on odd j (interleaved), [32 tokens, 32]
  2 pre-norm ViT blocks: dim 32, 4 heads of 8, LayerNorm eps 1e-6, MLP 4x (128) with exact GELU;
                     the attention projections have q and v biases but NO k bias.
  head               mean over the tokens, fc_norm LayerNorm (eps 1e-6), Linear(32, 5).

Paddle idioms on this side:
- root `VideoMAEForVideoClassification`: `embeddings`, `layers` (LayerList of `VideoMAELayer`),
  `fc_norm`, `classifier`.
- `VideoMAEEmbeddings`: `patch_embeddings` (`TubeletEmbeddings`, child `projection` = Conv3D
  with kernel = stride = (2, 4, 4)), then the sinusoid table as a (non-persistable) BUFFER
  `position_embeddings` [1, 32, 32] built with numpy in __init__ and added in the forward.
- `VideoMAELayer`: `layernorm_before`, `attention`, `layernorm_after`, `mlp`.
- `VideoMAEAttention`: THREE Linears `query` (bias), `key` (bias_attr=False), `value` (bias), and
  `dense`.
- `VideoMAEMlp`: `fc1`, `act` (nn.GELU module), `fc2`.
- model() gives every norm / bias trained-looking seeded values (rng seed 11).

The torch side (port_videomae_torch.py) was written independently (original VideoMAE / timm
style).

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_pos_halves -> the sinusoid table is built as [sin of all 16 frequencies | cos of all 16]
                       (concatenated halves) instead of interleaving sin / cos over even / odd
                       channels
  paddle_gelu_tanh  -> the MLP activation is nn.GELU(approximate=True) (tanh approximation)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IN_CH, NUM_FRAMES, IMG = 3, 4, 16
TUBELET, PATCH = 2, 4
HIDDEN, HEADS, DEPTH, MLP_HIDDEN, NUM_LABELS = 32, 4, 2, 128, 5
LN_EPS = 1e-6
BATCH = 2
NUM_TOKENS = (NUM_FRAMES // TUBELET) * (IMG // PATCH) ** 2
OWN_BUGS = {"paddle_pos_halves", "paddle_gelu_tanh"}
OTHER_BUGS = {"torch_qkv_bias_order", "torch_norm1_reused"}


def sinusoid_table(n_position, d_hid, halves=False):
    """[n_position, d_hid] float32, computed in float64 with numpy."""
    pos = np.arange(n_position, dtype=np.float64)[:, None]
    j = np.arange(d_hid)
    angles = pos / np.power(10000, 2 * (j // 2) / d_hid)
    if halves:
        freqs = angles[:, 0::2]
        return np.concatenate([np.sin(freqs), np.cos(freqs)], axis=1).astype("float32")
    table = np.empty_like(angles)
    table[:, 0::2] = np.sin(angles[:, 0::2])
    table[:, 1::2] = np.cos(angles[:, 1::2])
    return table.astype("float32")


class TubeletEmbeddings(nn.Layer):
    def __init__(self):
        super().__init__()
        self.projection = nn.Conv3D(IN_CH, HIDDEN, kernel_size=(TUBELET, PATCH, PATCH),
                                    stride=(TUBELET, PATCH, PATCH), data_format="NCDHW")

    def forward(self, pixel_values):
        x = self.projection(pixel_values)  # [B, D, T', H', W']
        return x.flatten(2).transpose([0, 2, 1])  # [B, N, D]


class VideoMAEEmbeddings(nn.Layer):
    def __init__(self, pos_halves=False):
        super().__init__()
        self.patch_embeddings = TubeletEmbeddings()
        table = sinusoid_table(NUM_TOKENS, HIDDEN, halves=pos_halves)
        self.register_buffer("position_embeddings", paddle.to_tensor(table[None]), persistable=False)

    def forward(self, pixel_values):
        x = self.patch_embeddings(pixel_values)
        return x + self.position_embeddings.astype(x.dtype)


class VideoMAEAttention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.num_heads = HEADS
        self.head_dim = HIDDEN // HEADS
        self.query = nn.Linear(HIDDEN, HIDDEN)
        self.key = nn.Linear(HIDDEN, HIDDEN, bias_attr=False)
        self.value = nn.Linear(HIDDEN, HIDDEN)
        self.dense = nn.Linear(HIDDEN, HIDDEN)

    def _split(self, t):
        b, n, _ = t.shape
        return t.reshape([b, n, self.num_heads, self.head_dim]).transpose([0, 2, 1, 3])

    def forward(self, hidden):
        b, n, c = hidden.shape
        q = self._split(self.query(hidden))
        k = self._split(self.key(hidden))
        v = self._split(self.value(hidden))
        scores = paddle.matmul(q, k, transpose_y=True) / (self.head_dim ** 0.5)
        probs = F.softmax(scores, axis=-1)
        ctx = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([b, n, c])
        return self.dense(ctx)


class VideoMAEMlp(nn.Layer):
    def __init__(self, gelu_tanh=False):
        super().__init__()
        self.fc1 = nn.Linear(HIDDEN, MLP_HIDDEN)
        self.act = nn.GELU(approximate=gelu_tanh)
        self.fc2 = nn.Linear(MLP_HIDDEN, HIDDEN)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class VideoMAELayer(nn.Layer):
    def __init__(self, gelu_tanh=False):
        super().__init__()
        self.layernorm_before = nn.LayerNorm(HIDDEN, epsilon=LN_EPS)
        self.attention = VideoMAEAttention()
        self.layernorm_after = nn.LayerNorm(HIDDEN, epsilon=LN_EPS)
        self.mlp = VideoMAEMlp(gelu_tanh)

    def forward(self, hidden):
        hidden = hidden + self.attention(self.layernorm_before(hidden))
        return hidden + self.mlp(self.layernorm_after(hidden))


class VideoMAEForVideoClassification(nn.Layer):
    def __init__(self, bug=""):
        super().__init__()
        self.embeddings = VideoMAEEmbeddings(pos_halves=bug == "paddle_pos_halves")
        self.layers = nn.LayerList([VideoMAELayer(gelu_tanh=bug == "paddle_gelu_tanh") for _ in range(DEPTH)])
        self.fc_norm = nn.LayerNorm(HIDDEN, epsilon=LN_EPS)
        self.classifier = nn.Linear(HIDDEN, NUM_LABELS)

    def forward(self, pixel_values):
        hidden = self.embeddings(pixel_values)
        for layer in self.layers:
            hidden = layer(hidden)
        pooled = self.fc_norm(hidden.mean(axis=1))
        return self.classifier(pooled)


def _trained_look(m):
    rng = np.random.default_rng(11)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            layer.weight.set_value(rng.uniform(0.6, 1.4, HIDDEN).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, HIDDEN).astype("float32"))
        elif isinstance(layer, (nn.Linear, nn.Conv3D)) and layer.bias is not None:
            n = layer.bias.shape[0]
            layer.bias.set_value(rng.normal(0.0, 0.1, n).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_videomae paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = VideoMAEForVideoClassification(bug if bug in OWN_BUGS else "")
    _trained_look(m)
    m.eval()
    return m


def _video():
    rng = np.random.default_rng(41)
    return rng.standard_normal((BATCH, IN_CH, NUM_FRAMES, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_video()),), {}


def loss(output):
    # logits [2, 5]
    return (output**2).mean()
