"""Relative-position scores from a table kept as a buffer for the longest sequence (as paddlenlp's
NeZha keeps ``relative_positions_embeddings``), sliced to the input's length inline.
PADIFF_BUG=paddle_rel_sign: the relative term subtracted instead of added."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import D, S, bug, hidden
from paddle import nn

MAX = 32


def table(n: int) -> np.ndarray:
    rel = np.clip(np.arange(n)[None, :] - np.arange(n)[:, None], -4, 4).astype("float32")
    freqs = np.arange(D, dtype="float32") / D
    return np.sin(rel[..., None] * (1.0 + freqs))  # [n, n, D]


class Attn(nn.Layer):
    def __init__(self):
        super().__init__()
        self.q, self.k = nn.Linear(D, D), nn.Linear(D, D)
        self.register_buffer("rel_table", paddle.to_tensor(table(MAX)))

    def forward(self, x):
        q, k = self.q(x), self.k(x)
        rel = paddle.einsum("bid,ijd->bij", q, self.rel_table[:S, :S])
        s = paddle.matmul(q, k, transpose_y=True) + (-rel if bug() == "paddle_rel_sign" else rel)
        return paddle.matmul(F.softmax(s / D**0.5, axis=-1), x)


class Model(nn.Layer):
    def __init__(self):
        super().__init__()
        self.attn = Attn()
        self.norm = nn.LayerNorm(D)

    def forward(self, x):
        return self.norm(x + self.attn(x))


def model():
    paddle.seed(0)
    return Model().eval()


def inputs():
    return paddle.to_tensor(hidden())


def loss(out):
    return (out[..., : D // 2] ** 2).mean()
