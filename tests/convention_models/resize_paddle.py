"""A branch that ends by upsampling inside its module on one side and just after it on the
other (HRNet's low-to-high fuse: a conv+BN layer here followed by an inline nearest
``F.interpolate``; ``Sequential(conv, bn, Upsample)`` in resize_torch.py). The two modules'
outputs differ in shape, one the other's repeated by nearest neighbour: the same values.

PADIFF_BUG (this side): paddle_bilinear -> the inline resize is bilinear."""
import paddle
import paddle.nn.functional as F
from _common import bug, image
from paddle import nn

C = 3


class ConvBN(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(C, C, 1, bias_attr=False)
        self.bn = nn.BatchNorm2D(C)

    def forward(self, x):
        return self.bn(self.conv(x))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.down = nn.Conv2D(C, C, 3, stride=2, padding=1)
        self.low_to_high = ConvBN()
        self.head = nn.Conv2D(C, 2, 1)

    def forward(self, x):
        low = self.down(x)
        mode = "bilinear" if bug() == "paddle_bilinear" else "nearest"
        up = F.interpolate(self.low_to_high(low), scale_factor=2, mode=mode)
        return self.head(F.relu(x + up))


def model():
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.mean()
