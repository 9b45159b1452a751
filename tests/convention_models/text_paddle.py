"""A small text model, paddle side, written the way paddlenlp writes it: the embedding
is scaled after the lookup (outside the embedding module), the attention adds a sinusoidal
position table to its queries that a module of its own builds (torch builds it inline), the
additive attention mask holds -1e4, and the layers take a ``use_cache`` flag.
PADIFF_BUG=paddle_act: relu in layer 1; PADIFF_BUG=paddle_table: layer 1's position table
with frequencies of base 100 instead of 10000."""
import math

import paddle
import paddle.nn.functional as F
from _common import D, V, bug, ids, mask
from paddle import nn


class PositionTable(nn.Layer):
    """sin(position * base^(-i/D)), [S, D]: a module without weights, on this side only."""

    def __init__(self, base=10000.0):
        super().__init__()
        self.base = base

    def forward(self, x):
        positions = paddle.arange(x.shape[1], dtype="float32").unsqueeze(-1)
        return paddle.sin(positions * self.base ** (-paddle.arange(D, dtype="float32") / D))


class Attention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(D, D) for _ in range(4))
        self.table = PositionTable()

    def forward(self, x, bias, use_cache=False):
        q = self.q(x) + 0.5 * self.table(x)
        s = paddle.matmul(q, self.k(x), transpose_y=True) / math.sqrt(D) + bias
        return self.o(paddle.matmul(F.softmax(s, axis=-1), self.v(x)))


class Layer(nn.Layer):
    def __init__(self):
        super().__init__()
        self.attn, self.norm1 = Attention(), nn.LayerNorm(D)
        self.fc1, self.fc2, self.norm2 = nn.Linear(D, 2 * D), nn.Linear(2 * D, D), nn.LayerNorm(D)
        self.act = F.gelu

    def forward(self, x, bias, use_cache=False):
        x = self.norm1(x + self.attn(x, bias, use_cache=use_cache))
        return self.norm2(x + self.fc2(self.act(self.fc1(x))))


class Model(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        self.pos = nn.Embedding(V, D)
        self.layers = nn.LayerList([Layer() for _ in range(2)])
        self.head = nn.Linear(D, 4)

    def forward(self, input_ids, attention_mask):
        x = self.embed(input_ids) * math.sqrt(D)
        x = x + self.pos(paddle.arange(input_ids.shape[1]).unsqueeze(0))
        bias = (1.0 - attention_mask[:, None, :].astype("float32")) * -1e4
        for layer in self.layers:
            x = layer(x, bias, use_cache=False)
        return self.head(x)


def model():
    paddle.seed(0)
    m = Model()
    m.eval()
    if bug() == "paddle_act":
        m.layers[1].act = F.relu
    elif bug() == "paddle_table":
        m.layers[1].attn.table.base = 100.0
    return m


def inputs():
    return (), {"input_ids": paddle.to_tensor(ids()), "attention_mask": paddle.to_tensor(mask())}


def loss(out):
    return (out**2).mean()
