"""A multi-branch block (Inception-style) written PaddleClas-fashion: every convolution is a
``ConvBN`` unit whose BatchNorm applies the ReLU itself (``nn.BatchNorm(act="relu")``); three
branches (a 1x1; a 1x1 reduction then a 3x3; a max-pool then a 1x1 projection) concatenated on
channels. The torch side (incept_torch.py) fuses the two 1x1 convolutions that read the block's
input into one, calls ReLU as a module of its own after each BatchNorm, and wraps the pool branch
one Sequential deeper.

PADIFF_BUG: torch_concat_swapped (the other side's: accepted, ignored)."""
import numpy as np
import paddle
from _common import bug, image
from paddle import nn

C = 8


class ConvBN(nn.Layer):
    def __init__(self, cin, cout, k):
        super().__init__()
        self.conv = nn.Conv2D(cin, cout, k, padding=k // 2, bias_attr=False)
        self.bn = nn.BatchNorm(cout, act="relu")

    def forward(self, x):
        return self.bn(self.conv(x))


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.one = ConvBN(C, 4, 1)
        self.red = ConvBN(C, 3, 1)
        self.three = ConvBN(3, 6, 3)
        self.pool = nn.MaxPool2D(3, 1, padding=1)
        self.proj = ConvBN(C, 2, 1)

    def forward(self, x):
        return paddle.concat([self.one(x), self.three(self.red(x)), self.proj(self.pool(x))], axis=1)


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = ConvBN(3, C, 3)
        self.block = Block()
        self.mix = nn.Conv2D(12, 4, 1)
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        return self.head(self.mix(self.block(self.stem(x))).mean(axis=[2, 3]))


def model():
    if bug() not in ("", "torch_concat_swapped"):
        raise ValueError(f"incept paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(11)
    for layer in net.sublayers():
        if isinstance(layer, nn.BatchNorm):  # statistics of a trained model, not the identity
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, n).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, n).astype("float32"))
    return net.eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.pow(2).mean()
