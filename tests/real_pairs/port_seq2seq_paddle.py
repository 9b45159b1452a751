"""Hand-written port, paddle side: a tiny Transformer translation model (written by "person A").

paddle's own nn.Transformer (2 encoder + 2 decoder layers, d_model 32, 4 heads, FFN 64, erf-GELU,
pre-norm: normalize_before=True, with the final encoder/decoder LayerNorms nn.Transformer always
adds), one nn.Embedding shared by source and target and scaled by sqrt(d_model), sinusoidal
positions from a precomputed buffer ([sin | cos] halves, concatenated), the output projection
tied to the embedding (matmul with its weight, transpose_y). Masks in paddle's conventions: the
source padding mask is a bool KEEP mask [B, 1, 1, S] (True = attend), the causal mask the float
additive one of Transformer.generate_square_subsequent_mask (-inf above the diagonal).

The torch side (port_seq2seq_torch.py) was written independently, by hand.

PADIFF_BUG=paddle_gelu_tanh plants this side's bug: decoder layer 0's activation is the tanh
approximation of GELU (F.gelu(approximate=True)) instead of the exact erf GELU.
"""
import functools
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, D_MODEL, HEADS, FFN, LAYERS, MAX_LEN = 40, 32, 4, 64, 2, 64
PAD = 0
BATCH, SRC_LEN, TGT_LEN = 2, 10, 9
SRC_LENGTHS = [10, 7]


def _sinusoid_table(max_len, d):
    pos = np.arange(max_len, dtype=np.float64)[:, None]
    inv_freq = 1.0 / (10000.0 ** (np.arange(0, d, 2, dtype=np.float64) / d))
    ang = pos * inv_freq[None, :]
    return np.concatenate([np.sin(ang), np.cos(ang)], axis=-1).astype("float32")


class PositionalEncoding(nn.Layer):
    def __init__(self, d_model, max_len=MAX_LEN):
        super().__init__()
        self.register_buffer("table", paddle.to_tensor(_sinusoid_table(max_len, d_model)))

    def forward(self, x):
        return x + self.table[: x.shape[1]]


class TransformerTranslator(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, D_MODEL)
        self.pos_encoding = PositionalEncoding(D_MODEL)
        self.transformer = nn.Transformer(
            d_model=D_MODEL, nhead=HEADS, num_encoder_layers=LAYERS, num_decoder_layers=LAYERS,
            dim_feedforward=FFN, dropout=0.0, activation="gelu", normalize_before=True,
        )
        self.scale = D_MODEL**0.5

    def forward(self, src_ids, tgt_ids):
        keep = (src_ids != PAD).unsqueeze([1, 2])  # [B, 1, 1, S], True = attend
        causal = self.transformer.generate_square_subsequent_mask(tgt_ids.shape[1])
        src = self.pos_encoding(self.embedding(src_ids) * self.scale)
        tgt = self.pos_encoding(self.embedding(tgt_ids) * self.scale)
        out = self.transformer(src, tgt, src_mask=keep, tgt_mask=causal, memory_mask=keep)
        return paddle.matmul(out, self.embedding.weight, transpose_y=True)  # tied output


def model():
    paddle.seed(0)
    m = TransformerTranslator()
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_gelu_tanh":
        m.transformer.decoder.layers[0].activation = functools.partial(F.gelu, approximate=True)
    return m


def _arrays():
    rng = np.random.default_rng(0)
    src = rng.integers(1, VOCAB, size=(BATCH, SRC_LEN)).astype("int64")  # no pad id (0) ...
    for b, n in enumerate(SRC_LENGTHS):
        src[b, n:] = PAD  # ... except the source padding after each length
    tgt = rng.integers(1, VOCAB, size=(BATCH, TGT_LEN)).astype("int64")
    return src, tgt


def inputs():
    src, tgt = _arrays()
    return (paddle.to_tensor(src), paddle.to_tensor(tgt)), {}


def loss(output):
    # logits [B, T, VOCAB] through the tied embedding (not a LayerNorm output itself)
    return (output**2).mean()
