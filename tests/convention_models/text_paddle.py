"""A small text model, paddle side, written the way paddlenlp writes it: the embedding
is scaled after the lookup (outside the embedding module), the additive attention mask
holds -1e4, and the layers take a ``use_cache`` flag. PADIFF_BUG=paddle_act: relu in layer 1."""
import math

import paddle
import paddle.nn.functional as F
from _common import D, V, bug, ids, mask
from paddle import nn


class Attention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(D, D) for _ in range(4))

    def forward(self, x, bias, use_cache=False):
        s = paddle.matmul(self.q(x), self.k(x), transpose_y=True) / math.sqrt(D) + bias
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
    return m


def inputs():
    return (), {"input_ids": paddle.to_tensor(ids()), "attention_mask": paddle.to_tensor(mask())}


def loss(out):
    return (out**2).mean()
