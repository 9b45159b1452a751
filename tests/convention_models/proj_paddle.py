"""A block written the way paddlenlp writes some of its own: projections of a class of its own
(``Proj``: a square ``weight`` stored [in, out], used as ``x @ W``, returning the heads apart,
[b, heads, s, head_dim], like paddlenlp's ``Linear3D``); the block's final LayerNorm registered
before the attention that holds the other one; bare projection matrices held by the model (no
Linear); an output dict with an entry the other side leaves out (``mean``).
PADIFF_BUG=paddle_mask: the attention lets every position see the padded ones."""
import math

import numpy as np
import paddle
import paddle.nn.functional as F
from _common import B, D, S, V, bug, ids, mask
from paddle import nn

H, DH, P = 4, D // 4, 6


class Proj(nn.Layer):
    def __init__(self):
        super().__init__()
        self.weight = self.create_parameter([D, D])
        self.bias = self.create_parameter([D], is_bias=True)

    def forward(self, x):
        y = paddle.matmul(x, self.weight) + self.bias
        return y.reshape([B, S, H, DH]).transpose([0, 2, 1, 3])


class Attention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.q_proj, self.k_proj, self.v_proj = Proj(), Proj(), Proj()
        self.dense = nn.Linear(D, D)
        self.layer_norm = nn.LayerNorm(D)

    def forward(self, x, m):
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        s = paddle.matmul(q, k, transpose_y=True) / math.sqrt(DH)
        if bug() != "paddle_mask":
            s = s + m
        c = paddle.matmul(F.softmax(s, axis=-1), v).transpose([0, 2, 1, 3]).reshape([B, S, D])
        return self.layer_norm(x + self.dense(c))


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.layer_norm = nn.LayerNorm(D)  # the block's last norm, registered first
        self.attention = Attention()
        self.ffn = nn.Linear(D, 2 * D)
        self.ffn_output = nn.Linear(2 * D, D)

    def forward(self, x, m):
        a = self.attention(x, m)
        return self.layer_norm(a + self.ffn_output(F.gelu(self.ffn(a))))


class Model(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        self.block = Block()
        self.text_projection = self.create_parameter([D, P])
        self.image_projection = self.create_parameter([D, P])

    def forward(self, input_ids, attention_mask):
        additive = (1.0 - attention_mask.astype("float32")[:, None, None, :]) * -1e4
        h = self.block(self.embed(input_ids), additive)
        first, last = h[:, 0], h[:, -1]
        return {"first": paddle.matmul(first, self.text_projection), "mean": h.mean(axis=1),
                "last": paddle.matmul(last, self.image_projection)}


def model():
    paddle.seed(0)
    m = Model()
    rng = np.random.default_rng(1)
    for _, p in m.named_parameters():  # every norm and bias its own values: a swapped pair shows
        p.set_value(rng.standard_normal(p.shape).astype("float32") * 0.3 + (1.0 if len(p.shape) == 1 else 0.0))
    m.eval()
    return m


def inputs():
    return (), {"input_ids": paddle.to_tensor(ids()), "attention_mask": paddle.to_tensor(mask())}


def loss(out):
    return (out["first"] ** 2).mean() + (out["last"] ** 2).mean()
