"""Attention whose projections are plain parameters stored [d, d] (as paddlenlp's XLNet
stores ``rel_attn.q``), a 0-d buffer (a temperature), and nothing else on this side.
PADIFF_BUG=paddle_axis: softmax over the query axis instead of the key axis."""
import math

import paddle
import paddle.nn.functional as F
from _common import B, D, S, V, bug, ids
from paddle import nn

H, DH = 4, D // 4


class Attn(nn.Layer):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v = (self.create_parameter([D, D]) for _ in range(3))
        self.register_buffer("temp", paddle.to_tensor(1.0))
        self.o = nn.Linear(D, D)
        self.axis = -1

    def forward(self, x):
        def heads(w):
            return paddle.matmul(x, w).reshape([B, S, H, DH]).transpose([0, 2, 1, 3])

        s = paddle.matmul(heads(self.q), heads(self.k), transpose_y=True) / (math.sqrt(DH) * self.temp)
        y = paddle.matmul(F.softmax(s, axis=self.axis), heads(self.v)).transpose([0, 2, 1, 3]).reshape([B, S, D])
        return self.o(y)


class Model(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        self.attn = Attn()
        self.norm = nn.LayerNorm(D)

    def forward(self, input_ids):
        x = self.embed(input_ids)
        return self.norm(x + self.attn(x))


def model():
    paddle.seed(0)
    m = Model()
    m.eval()
    if bug() == "paddle_axis":
        m.attn.axis = -2
    return m


def inputs():
    return paddle.to_tensor(ids())


def loss(out):
    return (out[..., : D // 2] ** 2).mean()
