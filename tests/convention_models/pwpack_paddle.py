"""Selective-kernel gating over two convolution paths: paddle scores each path with a Linear of
its own (``pick.0``, ``pick.1``: [R, C] each) over the squeezed features; the torch side
(pwpack_torch.py) scores both with ONE 1x1 convolution ``select`` ([2C, R, 1, 1]) over the
features kept as [B, R, 1, 1]: a pointwise convolution holding both Linears' rows.

PADIFF_BUG: paddle_pick_temperature (this side: the path scores divided by 1.05 before the
softmax), torch_view_interleaved (the other side's: accepted, ignored)."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug, image
from paddle import nn

C, R = 8, 4


class Gate(nn.Layer):
    def __init__(self):
        super().__init__()
        self.narrow = nn.Conv2D(C, C, 3, padding=1)
        self.wide = nn.Conv2D(C, C, 3, padding=2, dilation=2)
        self.squeeze = nn.Linear(C, R)
        self.pick = nn.LayerList([nn.Linear(R, C) for _ in range(2)])

    def forward(self, x):
        u = [self.narrow(x), self.wide(x)]
        z = F.relu(self.squeeze((u[0] + u[1]).mean(axis=[2, 3])))
        logits = paddle.stack([p(z) for p in self.pick], axis=1)  # [B, 2, C]
        if bug() == "paddle_pick_temperature":
            logits = logits / 1.05
        w = F.softmax(logits, axis=1)
        return w[:, 0, :, None, None] * u[0] + w[:, 1, :, None, None] * u[1]


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2D(3, C, 3, padding=1)
        self.gate = Gate()
        self.head = nn.Linear(C, 4)

    def forward(self, x):
        return self.head(self.gate(self.stem(x)).mean(axis=[2, 3]))


def model():
    if bug() not in ("", "paddle_pick_temperature", "torch_view_interleaved"):
        raise ValueError(f"pwpack paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(5)
    for p in net.gate.pick:  # scores far enough apart that the gate is no even split
        p.weight.set_value(rng.normal(0.0, 1.5, p.weight.shape).astype("float32"))
    return net.eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.pow(2).mean()
