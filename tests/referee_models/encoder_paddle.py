"""Spec: 12-layer paddle.nn.TransformerEncoder (post-norm, ReLU, dropout 0).

REFEREE_BUG (environment) plants a bug in layer REFEREE_LAYER (default 5) when
REFEREE_BUG_SIDE is "paddle": eps (norm1 epsilon 1e-3 instead of 1e-5; torch: 0.1), residual (attention
residual dropped), scale (feed-forward output x1.25), grad (backward-only: the
gradient through the feed-forward output is scaled x1.25, forward untouched).
"""

import os

import numpy as np
import paddle

D, HEADS, FF, LAYERS, BATCH, SEQ = 32, 4, 64, 12, 2, 8


class _GradScale(paddle.autograd.PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g * 1.25


def _plant(layer, bug):
    if bug == "eps":
        layer.norm1._epsilon = 1e-3  # paddle refuses epsilon > 1e-3
    elif bug in ("residual", "scale", "grad"):
        def forward(src, src_mask=None, cache=None):
            h = layer.self_attn(src, src, src, src_mask)
            src = layer.norm1(h if bug == "residual" else src + h)
            h = layer.linear2(layer.activation(layer.linear1(src)))
            if bug == "scale":
                h = h * 1.25
            elif bug == "grad":
                h = _GradScale.apply(h)
            return layer.norm2(src + h)
        layer.forward = forward
    elif bug:
        raise ValueError(f"unknown REFEREE_BUG {bug!r}")


def model():
    paddle.seed(0)
    layer = paddle.nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.0)
    enc = paddle.nn.TransformerEncoder(layer, LAYERS)
    if os.environ.get("REFEREE_BUG_SIDE") == "paddle":
        _plant(enc.layers[int(os.environ.get("REFEREE_LAYER", "5"))], os.environ.get("REFEREE_BUG", ""))
    return enc


def loss(output):
    # default: the mean of the last LayerNorm output - mathematically 0, so every gradient
    # is rounding noise (~1e-10); REFEREE_LOSS=weighted gives real gradients
    if os.environ.get("REFEREE_LOSS") == "weighted":
        w = np.random.default_rng(7).standard_normal(tuple(output.shape)).astype("float64")
        return (output * paddle.to_tensor(w).astype(output.dtype)).sum()
    return output.mean()


def inputs():
    return (paddle.to_tensor(np.random.default_rng(0).standard_normal((BATCH, SEQ, D)).astype("float32")),)
