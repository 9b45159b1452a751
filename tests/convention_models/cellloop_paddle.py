"""A state refined by a framework GRU cell a few times (paddle ``nn.GRUCell``: gates r, z, c in the
rows of ``weight_ih``/``weight_hh``), the cell's input made from the state by a norm and a Linear
in the loop's own code; the torch side (cellloop_torch.py) writes the GRU update by hand inside a
step module, its two Linears holding the gates z, r, n. No call of the cell pairs with a call of
the other side.

PADIFF_BUG: torch_blend_flipped (the other side's) is accepted and ignored."""
import numpy as np
import paddle
from _common import B, bug
from paddle import nn

C, H, STEPS = 8, 6, 3


class Refiner(nn.Layer):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(H)
        self.proj = nn.Linear(H, C)
        self.cell = nn.GRUCell(C, H)

    def forward(self, x, h):
        for _ in range(STEPS):
            u = self.proj(self.norm(h)) * x
            h, _ = self.cell(u, h)
        return h


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(C, H)
        self.refiner = Refiner()
        self.head = nn.Linear(H, 3)

    def forward(self, x):
        return self.head(self.refiner(x, paddle.tanh(self.embed(x))))


def model():
    if bug() not in ("", "torch_blend_flipped"):
        raise ValueError(f"cellloop paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    m = Net()
    m.eval()
    return m


def features() -> np.ndarray:
    return np.random.default_rng(5).standard_normal((B, C)).astype("float32")


def inputs():
    return (paddle.to_tensor(features()),), {}


def loss(out):
    return (out**2).mean()
