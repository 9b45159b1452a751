"""Learned fusion weights kept one vector per node here (EfficientDet's BiFPN in one port) and
one tensor per path in fusion_torch.py: ``w_top`` [2] and ``w_mid`` [2] against ``top_down``
[2, 2] (a stack), ``w_out`` [3] against ``bottom_up`` [3]. The two layers are one computation
(their convolutions paired); the vectors each holds itself pair as runs of the other's tensors.

PADIFF_BUG (this side): paddle_no_norm -> the output node's weights are not normalised."""
import paddle
import paddle.nn.functional as F
from _common import bug, image
from paddle import nn

C = 3


def fuse(w, xs, normalise=True):
    w = F.relu(w)
    if normalise:
        w = w / (w.sum() + 1e-4)
    return sum(w[i] * x for i, x in enumerate(xs))


class Fusion(nn.Layer):
    def __init__(self):
        super().__init__()
        one = nn.initializer.Constant(1.0)
        self.w_top = self.create_parameter([2], default_initializer=one)
        self.w_mid = self.create_parameter([2], default_initializer=one)
        self.w_out = self.create_parameter([3], default_initializer=one)
        self.conv_top = nn.Conv2D(C, C, 3, padding=1)
        self.conv_mid = nn.Conv2D(C, C, 3, padding=1)
        self.conv_out = nn.Conv2D(C, C, 3, padding=1)

    def forward(self, a, b):
        top = self.conv_top(fuse(self.w_top, [a, b]))
        mid = self.conv_mid(fuse(self.w_mid, [b, top]))
        return self.conv_out(fuse(self.w_out, [a, top, mid], bug() != "paddle_no_norm"))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fusion = Fusion()

    def forward(self, x):
        return self.fusion(x, x * 0.5)


def model():
    paddle.seed(0)
    m = Net().eval()
    for i, w in enumerate((m.fusion.w_top, m.fusion.w_mid, m.fusion.w_out)):  # weights that say which is which
        w.set_value(paddle.linspace(0.5 + i, 1.5 + i, w.shape[0]))
    return m


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.mean()
