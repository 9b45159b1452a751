"""Temporal conv blocks written two ways: here a flat list of four blocks ``tcn.{i}``, each a
``body`` Sequential (1x1 conv, PReLU, a hand-written global layer norm ``GlobalNorm`` whose
scale and shift are ``gamma`` and ``beta`` ``[1, C, 1]``) and two 1x1 convs ``res_conv`` and
``skip_conv``; the torch side (tcn_torch.py) nests them as two repeats of two blocks
(``repeats.{r}.{b}``), normalises with ``nn.GroupNorm(1, C)`` and fuses the two 1x1 convs into
one ``res_skip_conv`` of twice the channels, residual half first as its name says.

PADIFF_BUG: torch_res_skip_swapped (the other side reads the fused conv's halves the wrong way)."""
import numpy as np
import paddle
from _common import bug
from paddle import nn

C, T, N = 8, 12, 4


class GlobalNorm(nn.Layer):
    def __init__(self, c):
        super().__init__()
        self.gamma = self.create_parameter([1, c, 1], default_initializer=nn.initializer.Constant(1.0))
        self.beta = self.create_parameter([1, c, 1], default_initializer=nn.initializer.Constant(0.0))

    def forward(self, x):
        mean = x.mean(axis=[1, 2], keepdim=True)
        var = ((x - mean) ** 2).mean(axis=[1, 2], keepdim=True)
        return self.gamma * (x - mean) / paddle.sqrt(var + 1e-8) + self.beta


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv1D(C, C, 1), nn.PReLU(), GlobalNorm(C))
        self.res_conv = nn.Conv1D(C, C, 1)
        self.skip_conv = nn.Conv1D(C, C, 1)

    def forward(self, x):
        y = self.body(x)
        return self.res_conv(y), self.skip_conv(y)


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.tcn = nn.LayerList([Block() for _ in range(N)])

    def forward(self, x):
        skips = 0
        for block in self.tcn:
            res, skip = block(x)
            x = x + res
            skips = skips + skip
        return skips


def model():
    if bug() not in ("", "torch_res_skip_swapped"):
        raise ValueError(f"tcn paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(3)
    for b in net.tcn:  # scales and shifts as training leaves them
        norm = b.body[2]
        norm.gamma.set_value(rng.uniform(0.5, 1.5, (1, C, 1)).astype("float32"))
        norm.beta.set_value(rng.normal(0.0, 0.2, (1, C, 1)).astype("float32"))
    return net.eval()


def inputs():
    return (paddle.to_tensor(np.random.default_rng(0).standard_normal((2, C, T)).astype("float32")),), {}


def loss(out):
    return out.pow(2).mean()
