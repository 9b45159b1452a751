"""Spec: 12-layer torch.nn.TransformerEncoder, twin of encoder_paddle.py (batch_first, dropout 0).

Bugs as in encoder_paddle.py, planted when REFEREE_BUG_SIDE is "torch".
"""

import os

import numpy as np
import torch

D, HEADS, FF, LAYERS, BATCH, SEQ = 32, 4, 64, 12, 2, 8


class _GradScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g * 1.25


def _plant(layer, bug):
    if bug == "eps":
        layer.norm1.eps = 0.1
    elif bug in ("residual", "scale", "grad"):
        def forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False):
            h = layer.self_attn(src, src, src, need_weights=False)[0]
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
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.0, batch_first=True)
    enc = torch.nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
    if os.environ.get("REFEREE_BUG_SIDE") == "torch":
        _plant(enc.layers[int(os.environ.get("REFEREE_LAYER", "5"))], os.environ.get("REFEREE_BUG", ""))
    return enc


def loss(output):
    # default: the mean of the last LayerNorm output - mathematically 0, so every gradient
    # is rounding noise (~1e-10); REFEREE_LOSS=weighted gives real gradients
    if os.environ.get("REFEREE_LOSS") == "weighted":
        w = np.random.default_rng(7).standard_normal(tuple(output.shape)).astype("float64")
        return (output * torch.from_numpy(w).to(output.dtype)).sum()
    return output.mean()


def inputs():
    return (torch.zeros(BATCH, SEQ, D),)
