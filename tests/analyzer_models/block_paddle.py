"""Spec: two pre-norm blocks built from paddle layers plus hand-written attention (the reference).

Twin of block_torch.py, where bugs are planted. Inputs: x with std 0.01 (small variance, so a
LayerNorm epsilon of 1e-5 vs 1e-6 changes the output by ~1e-2) and a bool padding mask
(paddle convention: True = keep).
"""

import numpy as np
import paddle

D, HEADS, BATCH, SEQ = 16, 2, 2, 6
DH = D // HEADS


class GradIdentity(paddle.autograd.PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g


class Attention(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.q = paddle.nn.Linear(D, D)
        self.k = paddle.nn.Linear(D, D)
        self.v = paddle.nn.Linear(D, D)
        self.o = paddle.nn.Linear(D, D)
        self.softmax = paddle.nn.Softmax(axis=-1)

    def forward(self, x, mask):
        b, s = x.shape[0], x.shape[1]
        q = self.q(x).reshape([b, s, HEADS, DH]).transpose([0, 2, 1, 3])
        k = self.k(x).reshape([b, s, HEADS, DH]).transpose([0, 2, 1, 3])
        v = self.v(x).reshape([b, s, HEADS, DH]).transpose([0, 2, 1, 3])
        scores = paddle.matmul(q, k, transpose_y=True) * DH**-0.5
        scores = paddle.where(mask, scores, paddle.full_like(scores, -1e4))
        p = self.softmax(scores)
        out = paddle.matmul(p, v).transpose([0, 2, 1, 3]).reshape([b, s, D])
        return self.o(out)


class Block(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.norm0 = paddle.nn.LayerNorm(D, epsilon=1e-5)
        self.attn = Attention()
        self.norm1 = paddle.nn.LayerNorm(D)
        self.fc1 = paddle.nn.Linear(D, 2 * D)
        self.act = paddle.nn.GELU()
        self.fc2 = paddle.nn.Linear(2 * D, D)
        self.drop = paddle.nn.Dropout(0.0)

    def forward(self, x, mask):
        h = self.norm0(x * 0.01)
        h = h + self.attn(h, mask)
        f = self.fc2(self.act(self.fc1(self.norm1(h))))
        f = GradIdentity.apply(f)
        return h + self.drop(f)


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = paddle.nn.LayerList([Block(), Block()])

    def forward(self, x, mask):
        for blk in self.blocks:
            x = blk(x, mask)
        return x


def model():
    paddle.seed(0)
    return Net()


def loss(output):
    w = np.random.default_rng(7).standard_normal(tuple(output.shape)).astype("float32")
    return (output * paddle.to_tensor(w)).sum()


def inputs():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, SEQ, D)).astype("float32")
    keep = np.ones((BATCH, 1, 1, SEQ), dtype=bool)
    keep[1, :, :, -2:] = False  # the second sequence is padded
    return (paddle.to_tensor(x), paddle.to_tensor(keep))
