"""A stem over the image's pixel phases, paddle side: ``nn.PixelUnshuffle(2)`` stacks the four
phases of each channel as channels (PixelUnshuffle's order), then a 3x3 convolution; the torch side
keeps one 6x6 stride-2 convolution, which computes the same map.

PADIFF_BUG (this side): paddle_phases_unknown -> the phases stacked as (ee, oo, eo, oe), no
order any library uses: the convolution's input is no known space-to-depth and the transfer
refuses, naming both kernels."""
import paddle
from _common import bug, image
from paddle import nn


class Stem(nn.Layer):
    def __init__(self):
        super().__init__()
        self.unshuffle = nn.PixelUnshuffle(2)
        self.conv = nn.Conv2D(12, 8, 3, padding=1, bias_attr=False)
        self.bn = nn.BatchNorm2D(8)

    def forward(self, x):
        if bug() == "paddle_phases_unknown":
            x = paddle.concat([x[:, :, 0::2, 0::2], x[:, :, 1::2, 1::2], x[:, :, 0::2, 1::2], x[:, :, 1::2, 0::2]], axis=1)
        else:
            x = self.unshuffle(x)
        return nn.functional.silu(self.bn(self.conv(x)))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = Stem()
        self.conv = nn.Conv2D(8, 8, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2D(1)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        x = nn.functional.relu(self.conv(self.stem(x)))
        return self.head(paddle.flatten(self.pool(x), 1))


def model():
    if bug() not in ("", "paddle_phases_unknown", "torch_head_relu"):
        raise ValueError(f"focus paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return paddle.to_tensor(image())


def loss(out):
    return (out**2).mean()
