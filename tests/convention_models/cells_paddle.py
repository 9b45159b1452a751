"""Three boundaries two correct ports draw differently, paddle side (cells_torch.py is the other):

* an embedding that owns its table and scales its output by sqrt(width) itself, against an
  ``nn.Embedding`` inside a wrapper that scales (the weights pair with the inner one; the
  wrapper is the call that returns the same values);
* a block whose last layer is a ``GELU`` module, against a block without it and a ``GELU``
  module called right after it (the same layer moved across the block's boundary);
* a bidirectional GRU run as two ``GRUCell`` (``cell_fw``, ``cell_bw``) in ``nn.BiRNN``,
  against one ``nn.GRU(bidirectional=True)``: a cell holds its layer's tensors for one
  direction, under the same names without the layer suffix.

PADIFF_BUG (this side): paddle_residual_twice -> the block's output added to its input twice,
in the model's own code."""
import math

import paddle
import paddle.nn.functional as F
from _common import D, V, bug, ids
from paddle import nn


class ScaledEmbedding(nn.Layer):
    def __init__(self):
        super().__init__()
        self.weight = self.create_parameter([V, D], default_initializer=nn.initializer.Normal(0.0, 0.1))

    def forward(self, x):
        return F.embedding(x, self.weight) * math.sqrt(D)


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(D, D)
        self.act = nn.GELU()

    def forward(self, x):
        return self.act(self.proj(x))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed = ScaledEmbedding()
        self.block = Block()
        self.rnn = nn.BiRNN(nn.GRUCell(D, D), nn.GRUCell(D, D))
        self.head = nn.Linear(2 * D, 4)

    def forward(self, x):
        h = self.embed(x)
        h = h + self.block(h)
        if bug() == "paddle_residual_twice":
            h = h + h
        out, _ = self.rnn(h)
        return self.head(out)


def model():
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(ids()),), {}


def loss(out):
    return (out * out).mean()
