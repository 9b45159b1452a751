"""Spec: 2-layer torch.nn.TransformerEncoder, twin of encoder_paddle.py (batch_first, dropout 0)."""

import os

import numpy as np
import torch

D, HEADS, FF, LAYERS, BATCH, SEQ = 16, 2, 32, 2, 2, 5


def model():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.0, batch_first=True)
    return torch.nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)


def loss(output):
    if os.environ.get("PADIFF_LOSS") == "mean":  # mean of a LayerNorm output: every gradient is ~0 (noise)
        return output.mean()
    w = np.random.default_rng(7).standard_normal(tuple(output.shape)).astype("float32")
    return (output * torch.from_numpy(w)).sum()


def inputs():
    return (torch.zeros(BATCH, SEQ, D),)
