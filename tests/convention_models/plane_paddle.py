"""plane: a sensor grid [batch, sensors, steps] mixed by blocks that normalise the whole plane
with one BatchNorm over its 42 elements. This side keeps the grid sensors-first and flattens it
that way (element s * 7 + t); plane_torch.py keeps it steps-first and flattens element t * 6 + s:
the norm's 42 scales, shifts and running statistics are one per element of the plane, held in
each side's own order. Bugs: ``paddle_norm_eps`` (this side's norm with epsilon 0.1),
``torch_residual_half`` (the torch block adds half its update)."""
import numpy as np
import paddle
from _common import SENSORS, STEPS, bug, grid
from paddle import nn


class GridBlock(nn.Layer):
    def __init__(self):
        super().__init__()
        eps = 0.1 if bug() == "paddle_norm_eps" else 1e-5
        self.norm = nn.BatchNorm1D(SENSORS * STEPS, epsilon=eps)
        self.mix = nn.Linear(STEPS, STEPS)

    def forward(self, x):
        b = x.shape[0]
        h = self.norm(x.reshape([b, SENSORS * STEPS])).reshape([b, SENSORS, STEPS])
        return x + paddle.tanh(self.mix(h))


class GridNet(nn.Layer):
    def __init__(self, block=GridBlock):
        super().__init__()
        self.blocks = nn.LayerList([block() for _ in range(2)])
        self.head = nn.Linear(SENSORS, 3)

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return self.head(x.mean(axis=2))


def model():
    if bug() not in ("", "paddle_norm_eps", "torch_residual_half"):
        raise ValueError(f"plane paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    m = GridNet()
    rng = np.random.default_rng(3)
    n = SENSORS * STEPS
    for blk in m.blocks:  # trained-looking statistics and affine values, all different per element
        blk.norm.weight.set_value(rng.uniform(0.5, 1.5, n).astype("float32"))
        blk.norm.bias.set_value(rng.normal(0, 0.3, n).astype("float32"))
        blk.norm._mean.set_value(rng.normal(0, 0.2, n).astype("float32"))
        blk.norm._variance.set_value(rng.uniform(0.5, 2.0, n).astype("float32"))
    m.eval()
    return m


def inputs():
    return paddle.to_tensor(grid())


def loss(out):
    return (out ** 2).mean()
