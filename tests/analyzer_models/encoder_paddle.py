"""Spec: 2-layer paddle.nn.TransformerEncoder (post-norm, ReLU, dropout 0); twin of encoder_torch.py."""

import os

import numpy as np
import paddle

D, HEADS, FF, LAYERS, BATCH, SEQ = 16, 2, 32, 2, 2, 5


def model():
    paddle.seed(0)
    layer = paddle.nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.0)
    return paddle.nn.TransformerEncoder(layer, LAYERS)


def loss(output):
    if os.environ.get("PADIFF_LOSS") == "mean":  # mean of a LayerNorm output: every gradient is ~0 (noise)
        return output.mean()
    w = np.random.default_rng(7).standard_normal(tuple(output.shape)).astype("float32")
    return (output * paddle.to_tensor(w)).sum()


def inputs():
    return (paddle.to_tensor(np.random.default_rng(0).standard_normal((BATCH, SEQ, D)).astype("float32")),)
