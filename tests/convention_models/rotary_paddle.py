"""Attention with a rotary table built by a module of this side's own (``Rotary``: cos and sin
of the positions), applied inline; the torch side (rotary_torch.py) builds the table inline too.
The table is a value nothing on the torch side records: where the attention's output differs,
the module records cannot tell the table from the code after it, the operations can.

PADIFF_BUG: paddle_rope_base (this side's: the table built with base 1000), torch_scale_dim
(the torch side's: scores scaled by the model width, not the head's)."""
import math

import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug, hidden
from paddle import nn

D, HEADS, N = 16, 2, 2
HD = D // HEADS
BUGS = ("", "paddle_rope_base", "torch_scale_dim")


class Rotary(nn.Layer):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.base = 1000.0 if bug() == "paddle_rope_base" else 10000.0

    def forward(self, x, seq_len):
        inv_freq = 1.0 / self.base ** (paddle.arange(0, self.dim, 2, dtype="float32") / self.dim)
        freqs = paddle.outer(paddle.arange(seq_len, dtype="float32"), inv_freq)
        emb = paddle.concat([freqs, freqs], axis=-1)
        return emb.cos(), emb.sin()


def rotate_half(x):
    x1, x2 = x.chunk(2, axis=-1)
    return paddle.concat([-x2, x1], axis=-1)


class Attention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(D, D)
        self.k_proj = nn.Linear(D, D)
        self.v_proj = nn.Linear(D, D)
        self.o_proj = nn.Linear(D, D)
        self.rotary = Rotary(HD)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = (p(x).reshape([b, s, HEADS, HD]).transpose([0, 2, 1, 3]) for p in (self.q_proj, self.k_proj, self.v_proj))
        cos, sin = self.rotary(v, s)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        scores = paddle.matmul(q, k, transpose_y=True) / math.sqrt(HD)
        causal = paddle.triu(paddle.full([s, s], -1e9, dtype="float32"), diagonal=1)
        out = paddle.matmul(F.softmax(scores + causal, axis=-1), v)
        return self.o_proj(out.transpose([0, 2, 1, 3]).reshape([b, s, D]))


class Layer(nn.Layer):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(D)
        self.attn = Attention()

    def forward(self, x):
        return x + self.attn(self.norm(x))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.layers = nn.LayerList([Layer() for _ in range(N)])
        self.head = nn.Linear(D, 4)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def model():
    if bug() not in BUGS:
        raise ValueError(f"rotary paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(7)
    for layer in net.layers:
        layer.norm.weight.set_value(rng.uniform(0.5, 1.5, D).astype("float32"))
        layer.norm.bias.set_value(rng.normal(0.0, 0.2, D).astype("float32"))
    return net.eval()


def inputs():
    return (paddle.to_tensor(hidden()),), {}


def loss(out):
    return out.pow(2).mean()
