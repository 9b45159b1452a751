"""A small conv net, paddle side, written the way paddle.vision writes one: the stem's
BatchNorm fuses its ReLU (``nn.BatchNorm(act="relu")``), layers are named by role
(``stem``, ``blocks.0.bn1``). PADIFF_BUG=paddle_res: block 0 loses its residual add.
PADIFF_TRAIN=1: train mode (BatchNorm on batch statistics) with SGD."""
import os

import paddle
from _common import bug, image
from paddle import nn


class Block(nn.Layer):
    def __init__(self, c):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2D(c, c, 3, padding=1, bias_attr=False), nn.BatchNorm2D(c)
        self.conv2, self.bn2 = nn.Conv2D(c, c, 3, padding=1, bias_attr=False), nn.BatchNorm2D(c)
        self.relu = nn.ReLU()
        self.residual = True

    def forward(self, x):
        y = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
        return self.relu(y + x if self.residual else y)


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem_conv = nn.Conv2D(3, 8, 3, padding=1, bias_attr=False)
        self.stem_bn = nn.BatchNorm(8, act="relu")
        self.blocks = nn.LayerList([Block(8), Block(8)])
        self.pool = nn.AdaptiveAvgPool2D(1)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        x = self.stem_bn(self.stem_conv(x))
        for b in self.blocks:
            x = b(x)
        return self.fc(paddle.flatten(self.pool(x), 1))


def train() -> bool:
    return os.environ.get("PADIFF_TRAIN", "") == "1"


def model():
    paddle.seed(0)
    m = Net()
    m.train() if train() else m.eval()
    if bug() == "paddle_res":
        m.blocks[0].residual = False
    return m


def inputs():
    return paddle.to_tensor(image())


def loss(out):
    return (out**2).mean()


def optimizer(m):
    return paddle.optimizer.SGD(learning_rate=0.1, parameters=m.parameters()) if train() else None
