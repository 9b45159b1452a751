"""Pre-activation bottleneck blocks whose norms the two authors register in other orders.

Each paddle ``Bottleneck`` keeps three ``Unit`` s (BatchNorm, ReLU, conv) for its main path,
registered reduce / spatial / expand, and its projection shortcut's BatchNorm and convolution
(with a bias) directly on the block, registered last. The torch side (units_torch.py) registers
the shortcut unit first, then the main path, with names of its own: four BatchNorms of one shape
per block that neither names nor registration order pair; the convolution beside each does.

A learned bias over the feature map's positions sits on paddle's root as ``[C, H*W]`` and is
handed to the first block; torch keeps it inside its first block as ``[H*W, C]``: the one
trainable tensor left on each side once everything else paired.

PADIFF_BUG: paddle_spatial_eps (this side: the spatial unit's BatchNorm built with epsilon 1e-3
instead of 1e-5), torch_expand_stride (the other side's: accepted, ignored)."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug, image
from paddle import nn


class Unit(nn.Layer):
    def __init__(self, cin, cout, k=1, groups=1, eps=1e-5):
        super().__init__()
        self.norm = nn.BatchNorm2D(cin, epsilon=eps)
        self.conv = nn.Conv2D(cin, cout, k, padding=k // 2, groups=groups, bias_attr=False)

    def forward(self, x):
        return self.conv(F.relu(self.norm(x)))


class Bottleneck(nn.Layer):
    def __init__(self, cin, mid, cout, eps=1e-5):
        super().__init__()
        self.reduce = Unit(cin, mid)
        self.spatial = Unit(mid, mid, 3, groups=2, eps=eps)
        self.expand = Unit(mid, cout)
        self.short_norm = nn.BatchNorm2D(cin)
        self.short = nn.Conv2D(cin, cout, 1)

    def forward(self, x):
        main = self.expand(self.spatial(self.reduce(x)))
        return main + self.short(F.relu(self.short_norm(x)))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2D(3, 8, 3, padding=1)
        self.pos = self.create_parameter([8, 64], default_initializer=nn.initializer.Constant(0.0))
        self.blocks = nn.LayerList([
            Bottleneck(8, 4, 16, eps=1e-3 if bug() == "paddle_spatial_eps" else 1e-5),
            Bottleneck(16, 4, 16),
        ])
        self.fc = nn.Linear(16, 5)

    def forward(self, x):
        x = self.stem(x)
        x = x + self.pos.reshape([1, 8, 8, 8])
        for b in self.blocks:
            x = b(x)
        return self.fc(x.mean(axis=[2, 3]))


def model():
    if bug() not in ("", "paddle_spatial_eps", "torch_expand_stride"):
        raise ValueError(f"units paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    g = np.random.default_rng(7)
    net.pos.set_value((0.5 * g.standard_normal((8, 64))).astype("float32"))
    for layer in net.sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            n = layer.weight.shape[0]
            layer.weight.set_value((1.0 + 0.3 * g.standard_normal(n)).astype("float32"))
            layer.bias.set_value((0.3 * g.standard_normal(n)).astype("float32"))
            layer._mean.set_value((0.2 * g.standard_normal(n)).astype("float32"))
            layer._variance.set_value((0.01 + 0.05 * g.random(n)).astype("float32"))
    return net.eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.pow(2).mean()
