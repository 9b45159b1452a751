"""Spec: the torch port of transformer_paddle.py -- with a planted porting bug:
layer 2 uses the tanh approximation of GELU. `make demo` shows where it is found."""

import torch
import torch.nn.functional as F


def gelu_tanh(x):
    return F.gelu(x, approximate="tanh")


def model():
    layer = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, activation="gelu", batch_first=True)
    enc = torch.nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)
    enc.layers[2].activation = gelu_tanh  # the planted bug
    return enc


def inputs():
    # replaced by the Paddle trace's inputs (and weights) under `padiff-trace run`
    return (torch.zeros(2, 10, 64),)


def loss(out):
    return (out**2).mean()


def optimizer(model):
    return torch.optim.Adam(model.parameters(), lr=1e-3)
