"""Convolution blocks written as one layer that owns its activation: ``ConvNormAct`` holds a
conv and a BatchNorm and applies the ReLU inline in its forward. The torch side
(convact_torch.py) writes each block as ``nn.Sequential(conv, bn, nn.ReLU())``.

The head pools the map inline and projects it with one more ``ConvNormAct`` inside ``PoolProj``;
torch's head is one ``nn.Sequential(pool, conv, bn, ReLU)``: no torch module pairs with the
projection block.

PADIFF_BUG: paddle_block_no_act (this side: the second block is built without its activation,
the porter having read the reference's ``act=None`` default), paddle_pool_no_act (this side: the
head's projection block is built without its activation)."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug, image
from paddle import nn


class ConvNormAct(nn.Layer):
    def __init__(self, cin, cout, k=3, act=True):
        super().__init__()
        self.conv = nn.Conv2D(cin, cout, k, padding=k // 2, bias_attr=False)
        self.bn = nn.BatchNorm2D(cout)
        self.act = act

    def forward(self, x):
        x = self.bn(self.conv(x))
        return F.relu(x) if self.act else x


class PoolProj(nn.Layer):
    def __init__(self, c, act=True):
        super().__init__()
        self.proj = ConvNormAct(c, c, k=1, act=act)

    def forward(self, x):
        return self.proj(x.mean(axis=[2, 3], keepdim=True)).flatten(1)


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.features = nn.LayerList([
            ConvNormAct(3, 8),
            ConvNormAct(8, 8, act=bug() != "paddle_block_no_act"),
            ConvNormAct(8, 12),
        ])
        self.head = PoolProj(12, act=bug() != "paddle_pool_no_act")
        self.fc = nn.Linear(12, 5)

    def forward(self, x):
        for f in self.features:
            x = f(x)
        return self.fc(self.head(x))


def model():
    if bug() not in ("", "paddle_block_no_act", "paddle_pool_no_act"):
        raise ValueError(f"convact paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()

    g = np.random.default_rng(5)
    for f in [*net.features, net.head.proj]:
        n = f.bn.weight.shape[0]
        f.bn.weight.set_value((1.0 + 0.2 * g.standard_normal(n)).astype("float32"))
        f.bn.bias.set_value((0.3 * g.standard_normal(n)).astype("float32"))
        f.bn._mean.set_value((0.1 * g.standard_normal(n)).astype("float32"))
        f.bn._variance.set_value((0.5 + g.random(n)).astype("float32"))
    return net.eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.pow(2).mean()
