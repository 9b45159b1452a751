"""A spatial gate (CBAM's) in blocks of two numbered stages: a module of paddle's own pools the
map over channels and concatenates ``[max, mean]``; a 7x7 convolution of those two planes and a
sigmoid scale the map. The torch side (poolgate_torch.py) concatenates ``[mean, max]`` inline
before its convolution: the two input channels of every gate's kernel are read the other way
round, which nothing but the values says.

PADIFF_BUG: torch_gate_tanh (the torch side's)."""
import paddle
import paddle.nn.functional as F
from _common import bug, image
from paddle import nn

C = 4


class ChannelPool(nn.Layer):
    def forward(self, x):
        return paddle.concat([x.max(axis=1, keepdim=True), x.mean(axis=1, keepdim=True)], axis=1)


class Block(nn.Layer):
    def __init__(self, cin):
        super().__init__()
        self.conv = nn.Conv2D(cin, C, 3, padding=1)
        self.pool = ChannelPool()
        self.gate = nn.Conv2D(2, 1, 7, padding=3)

    def forward(self, x):
        x = F.relu(self.conv(x))
        return x * F.sigmoid(self.gate(self.pool(x)))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stage1 = nn.LayerList([Block(3), Block(C)])
        self.stage2 = nn.LayerList([Block(C)])
        self.fc = nn.Linear(C, 5)

    def forward(self, x):
        for block in [*self.stage1, *self.stage2]:
            x = block(x)
        return self.fc(x.mean(axis=[2, 3]))


def model():
    if bug() not in ("", "torch_gate_tanh"):
        raise ValueError(f"poolgate paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.mean()
