"""A small image block stack written one way: a gated feed-forward over a map (1x1 expansion,
depthwise 3x3, the channels cut in two halves, GELU of the first times the second, 1x1
projection), the GELU inline. The torch side (gatechunk_torch.py) applies the GELU as a module
of its own (``act``) to the half it cut inline, as Restormer's GDFN does.

PADIFF_BUG: paddle_gate_halves_swapped (this side: the GELU goes to the second half)."""
import paddle
import paddle.nn.functional as F
from _common import bug, image
from paddle import nn

C, E = 8, 24


class GatedFFN(nn.Layer):
    def __init__(self, swapped=False):
        super().__init__()
        self.expand = nn.Conv2D(C, 2 * E, 1)
        self.depthwise = nn.Conv2D(2 * E, 2 * E, 3, padding=1, groups=2 * E)
        self.project = nn.Conv2D(E, C, 1)
        self.swapped = swapped

    def forward(self, x):
        a, b = paddle.chunk(self.depthwise(self.expand(x)), 2, axis=1)
        if self.swapped:
            a, b = b, a
        return self.project(F.gelu(a) * b)


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2D(3, C, 3, padding=1)
        self.blocks = nn.LayerList([GatedFFN(swapped=bug() == "paddle_gate_halves_swapped" and i == 1) for i in range(2)])
        self.head = nn.Conv2D(C, 3, 3, padding=1)

    def forward(self, img):
        x = self.stem(img)
        for blk in self.blocks:
            x = x + blk(x)
        return self.head(x)


def model():
    if bug() not in ("", "paddle_gate_halves_swapped", "torch_act_tanh"):
        raise ValueError(f"gatechunk paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.pow(2).mean()
