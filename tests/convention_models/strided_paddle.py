"""A RegNet-style block, pycls style: ``conv1`` (1x1), ``conv2`` (3x3, stride 2) and ``conv3``
(1x1) each a ConvBN layer of their own, and the shortcut projection ``downsample`` (1x1, stride 2)
registered and called last. The torch side (strided_torch.py) is torchvision style: the shortcut
``proj`` registered and called first, then ``f`` with ``a``, ``b``, ``c`` Sequentials. ``conv1``
and ``downsample`` hold weights of one shape; neither names nor order pair them, what their calls
return does (one keeps the image's size, the other halves it).

PADIFF_BUG: paddle_short_eps (this side: the shortcut's BatchNorm eps 1e-2)."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug, image
from paddle import nn

CIN, C = 3, 8
BUGS = ("", "paddle_short_eps")


class ConvBN(nn.Layer):
    def __init__(self, cin, cout, k, stride=1, eps=1e-5):
        super().__init__()
        self.conv = nn.Conv2D(cin, cout, k, stride=stride, padding=k // 2, bias_attr=False)
        self.bn = nn.BatchNorm2D(cout, epsilon=eps)

    def forward(self, x):
        return self.bn(self.conv(x))


class YBlock(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv1 = ConvBN(CIN, C, 1)
        self.conv2 = ConvBN(C, C, 3, stride=2)
        self.conv3 = ConvBN(C, C, 1)
        self.downsample = ConvBN(CIN, C, 1, stride=2, eps=1e-2 if bug() == "paddle_short_eps" else 1e-5)

    def forward(self, x):
        h = F.relu(self.conv1(x))
        h = F.relu(self.conv2(h))
        return F.relu(self.conv3(h) + self.downsample(x))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.block = YBlock()
        self.head = nn.Linear(C, 5)

    def forward(self, x):
        return self.head(self.block(x).mean(axis=[2, 3]))


def model():
    if bug() not in BUGS:
        raise ValueError(f"strided paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(11)
    for layer in net.sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            layer.weight.set_value(rng.uniform(0.5, 1.5, C).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, C).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, C).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 1.5, C).astype("float32"))
    return net.eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.pow(2).mean()
