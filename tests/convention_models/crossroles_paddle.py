"""A small decoder with three differences between two correct ports at once:

* packing in opposite directions: this side keeps q, k and v apart (q 32 rows, k and v 16
  each: grouped-query attention) and packs the MLP's gate|up in one Linear of 64 rows; the
  torch side (crossroles_torch.py) packs q|k|v in one Linear of 64 rows and keeps gate and up
  apart. The two fused tensors have one shape, ``[64, 16]``, in different modules;
* the embedding scaled by sqrt(d) inside a wrapper module here, inline after the lookup there,
  with RMSNorm (blind to a scale) the first thing each block does to its input;
* the padding mask handed to every block as the ids' 0/1 integers here, as a boolean
  ``[B, S, 1, S]`` mask (causal and padding) built once on the torch side.

PADIFF_BUG: paddle_embed_scale (this side: the wrapper scales by sqrt(d / 2)),
paddle_mask_query_axis (this side: block 0's attention masks padded queries, not keys),
torch_gate_tanh (the torch side's: block 0's MLP gate)."""
import math

import numpy as np
import paddle
import paddle.nn.functional as F
from _common import B, S, V, bug, ids, mask
from paddle import nn

D, H, KV = 16, 4, 2
HD = 8  # head size: q has H * HD = 32 rows, k and v KV * HD = 16 each
BUGS = ("", "paddle_embed_scale", "paddle_mask_query_axis", "torch_gate_tanh")


class ScaledEmbedding(nn.Layer):
    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(V, D)
        self.scale = math.sqrt(D / 2 if bug() == "paddle_embed_scale" else D)

    def forward(self, x):
        return self.table(x) * self.scale


class RMSNorm(nn.Layer):
    def __init__(self):
        super().__init__()
        self.weight = self.create_parameter([D], default_initializer=nn.initializer.Constant(1.0))

    def forward(self, x):
        return x * paddle.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class Attention(nn.Layer):
    def __init__(self, index):
        super().__init__()
        self.index = index
        self.q = nn.Linear(D, H * HD, bias_attr=False)
        self.k = nn.Linear(D, KV * HD, bias_attr=False)
        self.v = nn.Linear(D, KV * HD, bias_attr=False)
        self.o = nn.Linear(H * HD, D, bias_attr=False)

    def forward(self, x, pad):
        q = self.q(x).reshape([B, S, H, HD]).transpose([0, 2, 1, 3])
        k = self.k(x).reshape([B, S, KV, HD]).transpose([0, 2, 1, 3])
        v = self.v(x).reshape([B, S, KV, HD]).transpose([0, 2, 1, 3])
        k = paddle.repeat_interleave(k, H // KV, axis=1)
        v = paddle.repeat_interleave(v, H // KV, axis=1)
        keep = paddle.tril(paddle.ones([S, S], "bool"))
        if bug() == "paddle_mask_query_axis" and self.index == 0:
            keep = paddle.logical_and(keep, pad.astype("bool")[:, None, :, None])
        else:
            keep = paddle.logical_and(keep, pad.astype("bool")[:, None, None, :])
        scores = q @ k.transpose([0, 1, 3, 2]) / math.sqrt(HD)
        scores = paddle.where(keep, scores, paddle.full_like(scores, -1e9))
        out = F.softmax(scores, axis=-1) @ v
        return self.o(out.transpose([0, 2, 1, 3]).reshape([B, S, H * HD]))


class MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.gate_up = nn.Linear(D, 64, bias_attr=False)
        self.down = nn.Linear(32, D, bias_attr=False)

    def forward(self, x):
        g, u = paddle.split(self.gate_up(x), 2, axis=-1)
        return self.down(F.silu(g) * u)


class Block(nn.Layer):
    def __init__(self, index):
        super().__init__()
        self.norm1 = RMSNorm()
        self.attn = Attention(index)
        self.norm2 = RMSNorm()
        self.mlp = MLP()

    def forward(self, x, pad):
        x = x + self.attn(self.norm1(x), pad)
        return x + self.mlp(self.norm2(x))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed = ScaledEmbedding()
        self.blocks = nn.LayerList([Block(i) for i in range(2)])
        self.norm = RMSNorm()

    def forward(self, x, pad):
        h = self.embed(x)
        for b in self.blocks:
            h = b(h, pad)
        return self.norm(h)


def model():
    if bug() not in BUGS:
        raise ValueError(f"crossroles paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(5)
    for norm in (*(b.norm1 for b in net.blocks), *(b.norm2 for b in net.blocks), net.norm):
        norm.weight.set_value(rng.uniform(0.5, 1.5, D).astype("float32"))
    net.embed.table.weight.set_value(rng.normal(0.0, 0.3, (V, D)).astype("float32"))
    return net.eval()


def inputs():
    return (paddle.to_tensor(ids()), paddle.to_tensor(mask())), {}


def loss(out):
    return out.pow(2).mean()
