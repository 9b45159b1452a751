"""Blocks whose norms are registered in another order than they run, in stages numbered inside
a word, paddle side (mit_torch.py is the other; a Mix-Transformer's layout):

* ``block1.0.norm1`` / ``norm2`` against torch's ``stages.0.blocks.0.norm1`` / ``norm2``, which
  torch registers as ``fc``, ``norm2``, ``attn``, ``norm1``: the two LayerNorms of a block have
  one shape and only their names tell them apart;
* the attention (``q``, a packed ``kv``, ``proj``) holds no other tensor to pair it with
  torch's ``nn.MultiheadAttention``: the block around it, whose norms pair, is where its
  ``in_proj_weight`` is looked for;
* a head Linear ``head`` of the same shape as stage 1's ``proj`` against torch's
  ``decoder.0``: block index 0 there and in ``block1.0`` count different things.

PADIFF_BUG (this side): paddle_norm2_eps -> block norm2 built with epsilon 1e-3."""
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

    def forward(self, h):
        b, s, d = h.shape
        q = self.q(h).reshape([b, s, HEADS, d // HEADS]).transpose([0, 2, 1, 3])
        k, v = paddle.split(self.kv(h), 2, axis=-1)
        k = k.reshape([b, s, HEADS, d // HEADS]).transpose([0, 2, 1, 3])
        v = v.reshape([b, s, HEADS, d // HEADS]).transpose([0, 2, 1, 3])
        att = F.softmax(q @ k.transpose([0, 1, 3, 2]) / (d // HEADS) ** 0.5, axis=-1)
        return self.proj((att @ v).transpose([0, 2, 1, 3]).reshape([b, s, d]))


class Blk(nn.Layer):
    def __init__(self, d):
        super().__init__()
        self.norm1 = nn.LayerNorm(d)
        self.attn = Attn(d)
        self.norm2 = nn.LayerNorm(d, epsilon=1e-3 if bug() == "paddle_norm2_eps" else 1e-5)
        self.fc = nn.Linear(d, 2 * d)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.fc(self.norm2(x))[..., : x.shape[-1]]


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.block1 = nn.LayerList([Blk(D), Blk(D)])
        self.down = nn.Linear(D, 2 * D)
        self.block2 = nn.LayerList([Blk(2 * D)])
        self.head = nn.Linear(D, D)

    def forward(self, x):
        for blk in self.block1:
            x = blk(x)
        aux = self.head(x)
        x = self.down(x)
        for blk in self.block2:
            x = blk(x)
        return x, aux


def model():
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(hidden()),), {}


def loss(out):
    return (out[0] * out[0]).mean() + (out[1] * out[1]).mean()
