"""A positional encoding ordered per frequency (``[x, sin f0 x, cos f0 x, sin f1 x, ...]``, NeRF's
reference code) against one ordered per function and dimension (encode_torch.py: ``[x, sin of
every band, cos of every band]``): the same values, the columns in another order, so every
matrix reading the encoding holds its input columns in that order. A skip layer reads the
encoding and the hidden features concatenated ``[enc, h]`` here and ``[h, enc]`` there (parts of
unequal widths); the head takes them as two arguments here, concatenated there.

PADIFF_BUG (this side): paddle_pi -> the bands are pi * 2^k, not 2^k;
                        paddle_relu_after_cat -> the ReLU after the first layer is applied after
                        the concatenation, clipping the encoding the skip layer reads."""
import math

import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug
from paddle import nn

BANDS, W = 3, 8


def points() -> np.ndarray:
    return np.random.default_rng(0).uniform(-1, 1, size=(32, 3)).astype("float32")


class Encoder(nn.Layer):
    def forward(self, x):
        scale = math.pi if bug() == "paddle_pi" else 1.0
        parts = [x]
        for k in range(BANDS):
            parts += [paddle.sin(scale * 2.0**k * x), paddle.cos(scale * 2.0**k * x)]
        return paddle.concat(parts, axis=-1)


class Head(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(W + 3 + 6 * BANDS, 4)

    def forward(self, h, e):
        return self.fc(paddle.concat([h, e], axis=-1))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        n = 3 + 6 * BANDS
        self.enc = Encoder()
        self.first = nn.Linear(n, W)
        self.skip = nn.Linear(n + W, W)
        self.head = Head()

    def forward(self, x):
        e = self.enc(x)
        if bug() == "paddle_relu_after_cat":
            h = F.relu(self.skip(F.relu(paddle.concat([e, self.first(e)], axis=-1))))
        else:
            h = F.relu(self.skip(paddle.concat([e, F.relu(self.first(e))], axis=-1)))
        return self.head(h, e)


def model():
    if bug() not in ("", "paddle_pi", "paddle_relu_after_cat", "torch_skip_tanh"):
        raise ValueError(f"encode paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(points()),), {}


def loss(out):
    return out.mean()
