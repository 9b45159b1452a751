"""A block with two outputs in one: a residual part and a part handed on whole (a dual-path
block's shortcut). Paddle normalises the input once and projects it with two convolutions of its
own, ``to_res`` and ``to_dense``; the torch side (dual_torch.py) has a unit of its own,
``proj`` (BatchNorm, ReLU, one convolution with both parts' rows), whose output it splits.

PADIFF_BUG: paddle_dense_first (this side: the block's own code concatenates the dense part before
the residual sum, a porter reading the reference's ``torch.cat`` order the other way round),
torch_proj_no_act (the other side's: accepted, ignored)."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug, image
from paddle import nn

C = 8


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.norm = nn.BatchNorm2D(C)
        self.to_res = nn.Conv2D(C, C, 1)
        self.to_dense = nn.Conv2D(C, C, 1)
        self.body_norm = nn.BatchNorm2D(C)
        self.body = nn.Conv2D(C, C, 3, padding=1)

    def forward(self, x):
        h = F.relu(self.norm(x))
        res, dense = self.to_res(h), self.to_dense(h)
        y = res + self.body(F.relu(self.body_norm(x)))
        return paddle.concat([dense, y] if bug() == "paddle_dense_first" else [y, dense], axis=1)


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2D(3, C, 3, padding=1)
        self.block = Block()
        self.head = nn.Linear(2 * C, 4)

    def forward(self, x):
        return self.head(self.block(self.stem(x)).mean(axis=[2, 3]))


def model():
    if bug() not in ("", "paddle_dense_first", "torch_proj_no_act"):
        raise ValueError(f"dual paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    g = np.random.default_rng(11)
    for bn in (net.block.norm, net.block.body_norm):
        bn.weight.set_value((1.0 + 0.3 * g.standard_normal(C)).astype("float32"))
        bn.bias.set_value((0.3 * g.standard_normal(C)).astype("float32"))
        bn._mean.set_value((0.2 * g.standard_normal(C)).astype("float32"))
        bn._variance.set_value((0.5 + g.random(C)).astype("float32"))
    return net.eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.pow(2).mean()
