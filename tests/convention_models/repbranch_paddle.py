"""A reparameterisable block in its training form (three parallel conv+BN units and an identity
BatchNorm, summed), written with the branches in lists here and as named attributes in torch's
port (repbranch_torch.py):

* paddle: each block registers its identity BatchNorm (``bypass``) first, then a LayerList of
  two 3x3 conv+BN units, then a 1x1 conv+BN unit (``pointwise``); the stage is a Sequential of
  two blocks;
* torch: each block registers ``k3_first`` and ``k3_second`` (3x3 units), ``k1`` (the 1x1
  unit) and ``ident`` (the identity BatchNorm) last; one stage module holds the two blocks as
  ``first`` and ``second``.

The four BatchNorms of a block have one shape and no name saying which is which: each is told
by the layer beside it (the convolution its partner sits with), the identity one by the block.

PADIFF_BUG (this side): paddle_skip_eps -> the identity BatchNorm of the first block uses
epsilon 1e-3."""
import numpy as np
import paddle
from _common import bug, image
from paddle import nn

C = 8


class ConvBN(nn.Layer):
    def __init__(self, k):
        super().__init__()
        self.conv = nn.Conv2D(C, C, k, padding=k // 2, bias_attr=False)
        self.bn = nn.BatchNorm2D(C)

    def forward(self, x):
        return self.bn(self.conv(x))


class RepBlock(nn.Layer):
    def __init__(self, eps=1e-5):
        super().__init__()
        self.bypass = nn.BatchNorm2D(C, epsilon=eps)
        self.branches = nn.LayerList([ConvBN(3), ConvBN(3)])
        self.pointwise = ConvBN(1)

    def forward(self, x):
        out = self.bypass(x)
        for br in self.branches:
            out = out + br(x)
        return nn.functional.relu(out + self.pointwise(x))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2D(3, C, 3, padding=1)
        self.stage = nn.Sequential(RepBlock(1e-3 if bug() == "paddle_skip_eps" else 1e-5), RepBlock())
        self.head = nn.Linear(C, 4)

    def forward(self, x):
        x = self.stage(self.stem(x))
        return self.head(x.mean(axis=[2, 3]))


def model():
    if bug() not in ("", "paddle_skip_eps"):
        raise ValueError(f"repbranch paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(1)
    for layer in net.sublayers():  # trained-looking norms: no bug hides behind 1 and 0
        if isinstance(layer, nn.BatchNorm2D):
            for p, value in ((layer.weight, rng.uniform(0.5, 1.5, C)), (layer.bias, rng.normal(0, 0.2, C)),
                             (layer._mean, rng.normal(0, 0.3, C)), (layer._variance, rng.uniform(0.5, 2.0, C))):
                p.set_value(value.astype("float32"))
    return net.eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.mean()
