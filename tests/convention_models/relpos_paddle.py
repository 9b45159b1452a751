"""Self-attention with a learned bias per clipped relative distance (Shaw et al. / DeBERTa-style,
one bias per head): paddle's ``ClippedBias`` module computes the distances, clips them to
[-K, K] and gathers its table ``[heads, 2K + 1]``; the attention adds the result to its logits.
The torch side (relpos_torch.py) computes the clipped distances inline in its attention and
looks them up in an ``nn.Embedding(2K + 1, heads)`` of the attention's own.

PADIFF_BUG: paddle_distance_flipped (this side: distances taken key minus query instead of query
minus key, in ``ClippedBias``), torch_clip_short (the other side's: accepted, ignored)."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import D, bug, hidden
from paddle import nn

HEADS, K = 2, 3


class ClippedBias(nn.Layer):
    def __init__(self):
        super().__init__()
        self.table = self.create_parameter([HEADS, 2 * K + 1], default_initializer=nn.initializer.Constant(0.0))

    def forward(self, n):
        pos = paddle.arange(n)
        rel = pos.unsqueeze(0) - pos.unsqueeze(1) if bug() == "paddle_distance_flipped" else pos.unsqueeze(1) - pos.unsqueeze(0)
        idx = paddle.clip(rel, -K, K) + K
        return paddle.gather(self.table, idx.reshape([-1]), axis=1).reshape([HEADS, n, n])


class Attention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(D, D)
        self.k = nn.Linear(D, D)
        self.v = nn.Linear(D, D)
        self.out = nn.Linear(D, D)

    def forward(self, x, bias):
        b, n, _ = x.shape
        def heads(t):
            return t.reshape([b, n, HEADS, D // HEADS]).transpose([0, 2, 1, 3])
        q, k, v = heads(self.q(x)), heads(self.k(x)), heads(self.v(x))
        logits = paddle.matmul(q, k, transpose_y=True) / float(np.sqrt(D // HEADS)) + bias.unsqueeze(0)
        y = paddle.matmul(F.softmax(logits, axis=-1), v)
        return self.out(y.transpose([0, 2, 1, 3]).reshape([b, n, D]))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.rel = ClippedBias()
        self.attn = Attention()
        self.norm = nn.LayerNorm(D)

    def forward(self, x):
        return self.norm(x + self.attn(x, self.rel(x.shape[1])))


def model():
    if bug() not in ("", "paddle_distance_flipped", "torch_clip_short"):
        raise ValueError(f"relpos paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    net.rel.table.set_value(np.random.default_rng(3).normal(0.0, 1.0, (HEADS, 2 * K + 1)).astype("float32"))
    return net.eval()


def inputs():
    return (paddle.to_tensor(hidden()),), {}


def loss(out):
    return out.pow(2).mean()
