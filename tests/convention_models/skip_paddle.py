"""A side output made early and used only at the end (a generator's first RGB image, added to
the last one's): paddle side (skip_torch.py is the other). Everything recorded between the
layer that makes it and the end runs beside it and agrees whatever it holds, so that agreement
is no evidence that the difference was absorbed: a bug in that layer is where the error is made.
The late image's layer adds the early image inside it on torch's side and not here, so its
output differs by design (a boundary the model's output shows to be one).

PADIFF_BUG (this side): none."""
import paddle
import paddle.nn.functional as F
from _common import image
from paddle import nn

C = 8


class ToImage(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(C, 3, 1)

    def forward(self, h):
        return self.conv(h)


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2D(3, C, 3, padding=1), nn.ReLU())
        self.to_image_small = nn.Conv2D(C, 3, 1)
        self.body = nn.Sequential(nn.Conv2D(C, C, 3, padding=1), nn.ReLU())
        self.to_image = ToImage()

    def forward(self, x):
        h = self.stem(x)
        small = self.to_image_small(F.avg_pool2d(h, 2))
        h = self.body(h)
        return self.to_image(h) + F.interpolate(small, scale_factor=2, mode="nearest")


def model():
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.mean()
