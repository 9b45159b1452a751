"""Spec: a 2-layer torch.nn.TransformerEncoder, twin of encoder_paddle.py (batch_first, training mode:
no fast path, every submodule is called; dropout 0 keeps it deterministic)."""

import numpy as np
import torch


def model():
    torch.manual_seed(5)
    layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    return torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)


def inputs():
    return (torch.zeros(2, 4, 8),)  # replaced by the paddle trace's inputs


def loss(out):
    w = np.random.default_rng(7).standard_normal((2, 4, 8)).astype("float32")
    return (out * torch.from_numpy(w)).sum()
