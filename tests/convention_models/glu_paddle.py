"""Gated blocks: here a gated unit of two Linears, ``fc_gate`` registered before ``fc_value``,
returning ``sigmoid(gate) * value``; the torch side (glu_torch.py) packs both in one Linear
``proj [2d]`` and calls ``F.glu``, which takes the value half first. No name says which half is
which: the weight and the bias of the packed Linear swap together, and the values choose.

PADIFF_BUG: paddle_gate_tanh (this side: the gate squashed by tanh)."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug, hidden
from paddle import nn

D, N = 16, 2


class GatedUnit(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc_gate = nn.Linear(D, D)
        self.fc_value = nn.Linear(D, D)

    def forward(self, x):
        gate = paddle.tanh(self.fc_gate(x)) if bug() == "paddle_gate_tanh" else F.sigmoid(self.fc_gate(x))
        return gate * self.fc_value(x)


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(D, D)
        self.gated = GatedUnit()
        self.norm = nn.LayerNorm(D)

    def forward(self, x):
        return self.norm(x + self.gated(F.elu(self.fc(x))))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = nn.LayerList([Block() for _ in range(N)])

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x


def model():
    if bug() not in ("", "paddle_gate_tanh"):
        raise ValueError(f"glu paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(11)
    for b in net.blocks:  # biases as training leaves them: the two halves differ
        for lin in (b.gated.fc_gate, b.gated.fc_value):
            lin.bias.set_value(rng.normal(0.0, 0.5, lin.bias.shape).astype("float32"))
    return net.eval()


def inputs():
    return (paddle.to_tensor(hidden()),), {}


def loss(out):
    return out.pow(2).mean()
