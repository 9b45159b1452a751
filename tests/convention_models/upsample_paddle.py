"""A small segmentation head written the way one library writes it: the head's last step resizes
its logits to the input size inline (``F.interpolate`` at the end of its forward). The torch side
(upsample_torch.py) ends its head at the classifier convolution and resizes with an
``nn.Upsample`` module of its own after it.

PADIFF_BUG: torch_upsample_nearest is the other side's (accepted, ignored)."""
import paddle
import paddle.nn.functional as F
from _common import bug, image
from paddle import nn


class Head(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(8, 8, 3, padding=1)
        self.bn = nn.BatchNorm2D(8)
        self.cls = nn.Conv2D(8, 4, 1)

    def forward(self, x, size):
        y = self.cls(F.relu(self.bn(self.conv(x))))
        return F.interpolate(y, size=size, mode="bilinear", align_corners=False)


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2D(3, 8, 3, stride=2, padding=1)
        self.head = Head()

    def forward(self, x):
        return self.head(F.relu(self.stem(x)), x.shape[-2:])


def model():
    if bug() not in ("", "torch_upsample_nearest"):
        raise ValueError(f"upsample paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.pow(2).mean()
