"""Spec: a 4-layer paddle.nn.TransformerEncoder (d_model 64, 4 heads), two Adam steps."""

import numpy as np
import paddle


def model():
    paddle.seed(0)
    layer = paddle.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, activation="gelu")
    return paddle.nn.TransformerEncoder(layer, 4)


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 10, 64)).astype("float32")
    return (paddle.to_tensor(x),)


def loss(out):
    return (out**2).mean()


def optimizer(model):
    return paddle.optimizer.Adam(learning_rate=1e-3, parameters=model.parameters())
