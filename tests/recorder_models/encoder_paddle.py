"""Spec: a 2-layer paddle.nn.TransformerEncoder (d=8, 2 heads, ff 16, dropout 0), twin of encoder_torch.py."""

import numpy as np
import paddle


def model():
    paddle.seed(5)
    layer = paddle.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    return paddle.nn.TransformerEncoder(layer, 2)


def inputs():
    return (paddle.to_tensor(np.random.default_rng(6).standard_normal((2, 4, 8)).astype("float32")),)


def loss(out):
    w = np.random.default_rng(7).standard_normal((2, 4, 8)).astype("float32")
    return (out * paddle.to_tensor(w)).sum()
