"""Two attention blocks of different kinds in turn: a window-style block whose q|k|v come from
one fused Linear, then a block with a query Linear and a fused key|value Linear; the torch side
(crossfused_torch.py) writes the first block with three Linears and the second with one fused
q|k|v Linear. The only ``[3d, d]`` Linear of each side sits in the other block: each block's
norms say which block is which, and the fused projections pack their own block's parts.

PADIFF_BUG: paddle_scale_sqrt_d (this side: the second block scales scores by 1/d instead of
1/sqrt(d), inline), torch_first_softmax_axis (the torch side's)."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug, hidden
from paddle import nn

D = 16
BUGS = ("", "paddle_scale_sqrt_d", "torch_first_softmax_axis")


def attend(q, k, v, scale):
    return F.softmax(q @ k.transpose([0, 2, 1]) * scale, axis=-1) @ v


class FusedAttention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(D)
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)

    def forward(self, x):
        q, k, v = paddle.split(self.qkv(self.norm(x)), 3, axis=-1)
        return x + self.proj(attend(q, k, v, D ** -0.5))


class KVAttention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(D)
        self.q = nn.Linear(D, D)
        self.kv = nn.Linear(D, 2 * D)
        self.proj = nn.Linear(D, D)

    def forward(self, x):
        h = self.norm(x)
        k, v = paddle.split(self.kv(h), 2, axis=-1)
        scale = 1.0 / D if bug() == "paddle_scale_sqrt_d" else D ** -0.5
        return x + self.proj(attend(self.q(h), k, v, scale))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = nn.LayerList([FusedAttention(), KVAttention()])
        self.head = nn.Linear(D, 4)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x)


def model():
    if bug() not in BUGS:
        raise ValueError(f"crossfused paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(4)
    for b in net.blocks:
        b.norm.weight.set_value(rng.uniform(0.5, 1.5, D).astype("float32"))
        b.norm.bias.set_value(rng.normal(0.0, 0.3, D).astype("float32"))
    return net.eval()


def inputs():
    return (paddle.to_tensor(hidden()),), {}


def loss(out):
    return out.pow(2).mean()
