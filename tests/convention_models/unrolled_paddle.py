"""A small hierarchical vision transformer written one way: tokens kept as maps ``[b, h, w, c]``
in raster order, blocks in stages (``stages.0.blocks.0``, ``stages.1.blocks.0``, ``stages.2.blocks.0``), a separate
``q`` Linear beside a packed ``kv`` one, and the stage transition pooling its query and its
shortcut 2x2 by max over the map. The torch side (unrolled_torch.py) keeps tokens ``[b, n, c]``
in another order (the four pixels of every 2x2 window in four contiguous runs, so that a pool
is a max over those runs), its blocks in one flat list and q|k|v in one Linear.

PADIFF_BUG: paddle_mlp_relu (this side: the transition block's MLP uses ReLU, not GELU)."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug
from paddle import nn

C0, C1, C2, H = 8, 16, 32, 2


class Attention(nn.Layer):
    def __init__(self, dim_in, dim, pool):
        super().__init__()
        self.q = nn.Linear(dim_in, dim)
        self.kv = nn.Linear(dim_in, 2 * dim)
        self.out = nn.Linear(dim, dim)
        self.dim, self.pool = dim, pool

    def forward(self, x):  # [b, h, w, c]
        b, h, w, _ = x.shape
        q = self.q(x)
        if self.pool:
            q = F.max_pool2d(q.transpose([0, 3, 1, 2]), 2).transpose([0, 2, 3, 1])
        oh, ow = q.shape[1], q.shape[2]
        hd = self.dim // H
        q = q.reshape([b, oh * ow, H, hd]).transpose([0, 2, 1, 3])
        k, v = self.kv(x).reshape([b, h * w, 2, H, hd]).transpose([2, 0, 3, 1, 4])
        att = F.softmax(paddle.matmul(q, k, transpose_y=True) / hd ** 0.5, axis=-1)
        y = paddle.matmul(att, v).transpose([0, 2, 1, 3]).reshape([b, oh, ow, self.dim])
        return self.out(y)


class Block(nn.Layer):
    def __init__(self, dim_in, dim, pool=False, relu=False):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim_in)
        self.attn = Attention(dim_in, dim, pool)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.fc2 = nn.Linear(2 * dim, dim)
        self.shortcut = nn.Linear(dim_in, dim) if pool else None
        self.relu = relu

    def forward(self, x):
        n = self.ln1(x)
        if self.shortcut is not None:
            x = F.max_pool2d(self.shortcut(n).transpose([0, 3, 1, 2]), 2).transpose([0, 2, 3, 1])
        x = x + self.attn(n)
        h = self.fc1(self.ln2(x))
        return x + self.fc2(F.relu(h) if self.relu else F.gelu(h))


class Stage(nn.Layer):
    def __init__(self, blocks):
        super().__init__()
        self.blocks = nn.LayerList(blocks)

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return x


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed = nn.Conv2D(3, C0, 2, stride=2)
        relu = bug() == "paddle_mlp_relu"
        self.stages = nn.LayerList([Stage([Block(C0, C0)]), Stage([Block(C0, C1, pool=True, relu=relu), Block(C1, C1)]),
                                     Stage([Block(C1, C2, pool=True)])])
        self.norm = nn.LayerNorm(C2)
        self.head = nn.Linear(C2, 5)

    def forward(self, img):
        x = self.embed(img).transpose([0, 2, 3, 1])  # [b, 8, 8, c]
        for stage in self.stages:
            x = stage(x)
        return self.head(self.norm(x).mean(axis=[1, 2]))


def model():
    if bug() not in ("", "paddle_mlp_relu", "torch_pool_mean"):
        raise ValueError(f"unrolled paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net()


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 16, 16)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(out):
    return out.pow(2).mean()
