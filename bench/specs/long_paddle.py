"""A small MLP trained with dropout and AdamW (bench/long_run.py), paddle side."""
import numpy as np
import paddle
from paddle import nn

D, B = 256, 32


def model():
    paddle.seed(0)
    layers = []
    for _ in range(4):
        layers += [nn.Linear(D, D), nn.GELU(), nn.Dropout(0.1), nn.LayerNorm(D)]
    m = nn.Sequential(*layers, nn.Linear(D, 8))
    m.train()
    return m


def inputs():
    return paddle.to_tensor(np.random.default_rng(0).standard_normal((B, D)).astype("float32"))


def loss(out):
    return (out**2).mean()


def optimizer(m):
    return paddle.optimizer.AdamW(learning_rate=1e-3, parameters=m.parameters(), weight_decay=0.01)
