"""Two branches joined: a full-resolution conv and a strided one whose map is resized to the
full size inline (``F.interpolate``) here; torch's port (joinup_torch.py) resizes with an
``nn.Upsample`` module of its own; both concatenate the two maps for a 1x1 fuse.

PADIFF_BUG: torch_up_nearest is the other side's (accepted, ignored)."""
import paddle
import paddle.nn.functional as F
from _common import bug, image
from paddle import nn


class Head(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fine = nn.Conv2D(3, 4, 3, padding=1)
        self.coarse = nn.Conv2D(3, 4, 3, stride=2, padding=1)
        self.fuse = nn.Conv2D(8, 5, 1)

    def forward(self, x):
        up = F.interpolate(self.coarse(x), scale_factor=2, mode="bilinear", align_corners=False)
        return self.fuse(paddle.concat([self.fine(x), up], axis=1))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.head = Head()

    def forward(self, x):
        return self.head(x).flatten(1)


def model():
    if bug() not in ("", "torch_up_nearest"):
        raise ValueError(f"joinup paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.mean()
