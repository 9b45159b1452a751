"""A norm moved across a block boundary, paddle side (moved_torch.py is the other):

* a LayerNorm ``pre_norm`` before the first block, at the root, here; torch keeps it inside block
  0 (``blocks.0.ln0``, registered after the block's own norms and called first);
* two blocks of norm + Linear each, and a final norm: every LayerNorm has one shape, so neither
  names, blocks nor registration order can pair them; the order both models call them can.

PADIFF_BUG (this side): paddle_skip_pre -> block 1 adds its input after its Linear (a residual
the torch side does not have)."""
import numpy as np
import paddle
from _common import bug
from paddle import nn

B, S, D = 2, 5, 8


class Block(nn.Layer):
    def __init__(self, residual=False):
        super().__init__()
        self.norm = nn.LayerNorm(D)
        self.fc = nn.Linear(D, D + 1)
        self.out = nn.Linear(D + 1, D)
        self.residual = residual

    def forward(self, x):
        h = self.out(paddle.nn.functional.gelu(self.fc(self.norm(x))))
        return x + h if self.residual else h


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.pre_norm = nn.LayerNorm(D)
        self.blocks = nn.LayerList([Block(), Block(residual=bug() == "paddle_skip_pre")])
        self.final_norm = nn.LayerNorm(D)

    def forward(self, x):
        x = self.pre_norm(x)
        for b in self.blocks:
            x = b(x)
        return self.final_norm(x)


def model():
    paddle.seed(0)
    m = Net()
    rng = np.random.default_rng(4)
    for name, p in m.named_parameters():  # norms with scales of their own: which is which matters
        if "norm" in name:
            p.set_value(rng.normal(1.0 if name.endswith("weight") else 0.0, 0.3, p.shape).astype("float32"))
    return m


def inputs():
    return (paddle.to_tensor(np.random.default_rng(5).standard_normal((B, S, D)).astype("float32")),), {}


def loss(out):
    return (out * out).mean()
