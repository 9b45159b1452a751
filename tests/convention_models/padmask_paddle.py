"""Self-attention over padded sequences with the padding mask built at the root and handed to
the attention: here a boolean ``[b, s]`` that says True = padding (the keys masked out, with
``paddle.where``); the torch side (padmask_torch.py) hands ``F.scaled_dot_product_attention`` a
boolean ``[b, 1, 1, s]`` that says True = attend. The same mask: the other polarity, with axes
of size one kept for broadcasting.

PADIFF_BUG: torch_scale_by_dim (the torch side's)."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import D, S, bug, hidden
from paddle import nn

LENGTHS = np.array([S, S - 3], dtype="int64")


class Attention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(D, D) for _ in range(4))

    def forward(self, x, pad):
        scores = paddle.matmul(self.q(x), self.k(x), transpose_y=True) / D**0.5
        scores = paddle.where(pad[:, None, :], paddle.full_like(scores, -1e9), scores)
        return self.o(paddle.matmul(F.softmax(scores, axis=-1), self.v(x)))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.attn = Attention()
        self.head = nn.Linear(D, 3)

    def forward(self, x, lengths):
        pad = paddle.arange(S)[None, :] >= lengths[:, None]
        return self.head(x + self.attn(x, pad))


def model():
    if bug() not in ("", "torch_scale_by_dim"):
        raise ValueError(f"padmask paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(hidden()), paddle.to_tensor(LENGTHS)), {}


def loss(out):
    return out.mean()
