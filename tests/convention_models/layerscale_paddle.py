"""Layer scales as modules of their own (paddle: ``ls1``, ``ls2``, each a ``gamma`` [D]) against
the block's own parameters (torch: ``gamma2`` registered before ``gamma1``). No name, type or
call tells the four apart, and the order torch registers them in is not the order they are used
in: the values have to choose. A small head (Linear + GELU) after the block.

PADIFF_BUG (the other side's only): torch_head_gelu_tanh."""
import numpy as np
import paddle
from _common import D, bug, hidden
from paddle import nn


class LayerScale(nn.Layer):
    def __init__(self, dim, value):
        super().__init__()
        self.gamma = self.create_parameter([dim], default_initializer=nn.initializer.Constant(value))

    def forward(self, x):
        return x * self.gamma


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(D)
        self.attn = nn.Linear(D, D)
        self.mlp = nn.Linear(D, D)
        self.ls1 = LayerScale(D, 0.5)
        self.ls2 = LayerScale(D, 0.5)

    def forward(self, x):
        x = x + self.ls1(paddle.tanh(self.attn(self.norm(x))))
        return x + self.ls2(self.mlp(x))


class Head(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(D, 4)

    def forward(self, x):
        return nn.functional.gelu(self.fc(x))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(D, D)
        self.block = Block()
        self.head = Head()

    def forward(self, x):
        return self.head(self.block(self.embed(x)))


def model():
    if bug() not in ("", "torch_head_gelu_tanh"):
        raise ValueError(f"layerscale paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(3)
    for ls, lo in ((net.block.ls1, 0.2), (net.block.ls2, 1.5)):  # two scales far apart
        ls.gamma.set_value(rng.uniform(lo, lo + 0.3, [D]).astype("float32"))
    net.eval()
    return net


def inputs():
    return (paddle.to_tensor(hidden()),), {}
