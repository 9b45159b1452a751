"""Scores sharpened by a learned per-head temperature: here a plain multiplier ``temperature``
``[heads, 1, 1]``; the torch side (logscale_torch.py) trains ``log_temp [heads]`` and multiplies by
its exp. One side keeps the logarithm of the other's values, as its name says.

PADIFF_BUG: torch_temp_not_exp (the torch side's: the log is used as the multiplier itself)."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug, hidden
from paddle import nn

D, H = 16, 4


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.qk = nn.Linear(D, 2 * D)
        self.temperature = self.create_parameter([H, 1, 1], default_initializer=nn.initializer.Constant(1.0))
        self.out = nn.Linear(D, D)

    def forward(self, x):
        b, s, _ = x.shape
        q, k = self.qk(x).reshape([b, s, 2, H, D // H]).transpose([2, 0, 3, 1, 4]).unbind(0)
        attn = F.softmax((q @ k.transpose([0, 1, 3, 2])) * self.temperature, axis=-1)
        v = x.reshape([b, s, H, D // H]).transpose([0, 2, 1, 3])
        return self.out((attn @ v).transpose([0, 2, 1, 3]).reshape([b, s, D]))


def model():
    if bug() not in ("", "torch_temp_not_exp"):
        raise ValueError(f"logscale paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(7)  # temperatures as training leaves them: none of them 1
    net.temperature.set_value(rng.uniform(0.5, 2.0, (H, 1, 1)).astype("float32"))
    return net.eval()


def inputs():
    return (paddle.to_tensor(hidden()),), {}


def loss(out):
    return out.pow(2).mean()
