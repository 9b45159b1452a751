"""Attention with a boolean mask, paddle side: True = attend (paddle's convention for bool
attention masks)."""
import math

import paddle
import paddle.nn.functional as F
from _common import D, V, bug, ids, mask
from paddle import nn


class Attn(nn.Layer):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v = nn.Linear(D, D), nn.Linear(D, D), nn.Linear(D, D)

    def forward(self, x, keep):
        s = paddle.matmul(self.q(x), self.k(x), transpose_y=True) / math.sqrt(D)
        s = paddle.where(keep, s, paddle.full_like(s, -1e9))
        return paddle.matmul(F.softmax(s, axis=-1), self.v(x))


class Model(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed, self.attn, self.head = nn.Embedding(V, D), Attn(), nn.Linear(D, 4)

    def forward(self, input_ids, attention_mask):
        keep = attention_mask[:, None, :].astype("bool").expand([input_ids.shape[0], input_ids.shape[1], input_ids.shape[1]])
        return self.head(self.attn(self.embed(input_ids), keep))


def model():
    paddle.seed(0)
    m = Model()
    m.eval()
    assert bug() in ("", "scale")
    return m


def inputs():
    return (), {"input_ids": paddle.to_tensor(ids()), "attention_mask": paddle.to_tensor(mask())}


def loss(out):
    return (out**2).mean()
