"""Stages numbered inside a word, paddle side (stages_torch.py is the other): ``block1.0``,
``block1.1``, ``block2.0`` (each stage's blocks counted from 0 again, the stage in the name)
against ``stages.0.blocks.0`` ... on torch's side, where the attention is an
``nn.MultiheadAttention`` whose ``in_proj_weight`` packs paddle's ``q`` with its packed ``kv``.
The block indices of the two sides agree where they count different things; the norms beside
each attention pair, and the packing is looked for in their partner.

PADIFF_BUG (this side): paddle_kv_swapped -> the packed ``kv`` split as v|k."""
import paddle
import paddle.nn.functional as F
from _common import bug, hidden
from paddle import nn

D, HEADS = 16, 2


class Attn(nn.Layer):
    def __init__(self, d):
        super().__init__()
        self.q = nn.Linear(d, d)
        self.kv = nn.Linear(d, 2 * d)
        self.proj = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)
        self.d = d

    def forward(self, x):
        b, s, d = x.shape
        h = self.norm(x)
        q = self.q(h).reshape([b, s, HEADS, d // HEADS]).transpose([0, 2, 1, 3])
        k, v = paddle.split(self.kv(h), 2, axis=-1)
        if bug() == "paddle_kv_swapped":
            k, v = v, k
        k = k.reshape([b, s, HEADS, d // HEADS]).transpose([0, 2, 1, 3])
        v = v.reshape([b, s, HEADS, d // HEADS]).transpose([0, 2, 1, 3])
        att = F.softmax(q @ k.transpose([0, 1, 3, 2]) / (d // HEADS) ** 0.5, axis=-1)
        return x + self.proj((att @ v).transpose([0, 2, 1, 3]).reshape([b, s, d]))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.block1 = nn.LayerList([Attn(D), Attn(D)])
        self.down = nn.Linear(D, 2 * D)
        self.block2 = nn.LayerList([Attn(2 * D)])

    def forward(self, x):
        for blk in self.block1:
            x = blk(x)
        x = self.down(x)
        for blk in self.block2:
            x = blk(x)
        return x


def model():
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(hidden()),), {}


def loss(out):
    return (out * out).mean()
