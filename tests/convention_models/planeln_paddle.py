"""planeln: a sensor grid [batch, sensors, steps] whose blocks normalise the whole plane with one
LayerNorm over its 42 elements, flattened sensors-first on this side (element s * 7 + t);
planeln_torch.py keeps the grid steps-first and normalises it with ``nn.LayerNorm((7, 6))`` as it
is: its scale and shift are ``[7, 6]``, the same elements in another order. Bugs:
``paddle_norm_eps`` (this side's norm with epsilon 1e-3), ``torch_update_relu`` (the torch block
activates its update with ReLU instead of tanh)."""
import numpy as np
import paddle
from _common import SENSORS, STEPS, bug, grid
from paddle import nn
from plane_paddle import GridNet


class GridBlock(nn.Layer):
    def __init__(self):
        super().__init__()
        eps = 1e-3 if bug() == "paddle_norm_eps" else 1e-5  # paddle refuses a LayerNorm epsilon above 1e-3
        self.norm = nn.LayerNorm(SENSORS * STEPS, epsilon=eps)
        self.mix = nn.Linear(STEPS, STEPS)

    def forward(self, x):
        b = x.shape[0]
        h = self.norm(x.reshape([b, SENSORS * STEPS])).reshape([b, SENSORS, STEPS])
        return x + paddle.tanh(self.mix(h))


def model():
    if bug() not in ("", "paddle_norm_eps", "torch_update_relu"):
        raise ValueError(f"planeln paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    m = GridNet(GridBlock)
    rng = np.random.default_rng(4)
    n = SENSORS * STEPS
    for blk in m.blocks:  # trained-looking affine values, all different per element
        blk.norm.weight.set_value(rng.uniform(0.5, 1.5, n).astype("float32"))
        blk.norm.bias.set_value(rng.normal(0, 0.3, n).astype("float32"))
    m.eval()
    return m


def inputs():
    return paddle.to_tensor(grid())


def loss(out):
    return (out ** 2).mean()
