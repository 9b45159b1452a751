"""A filter computed by an MLP over positions, then windowed: paddle side calls the MLP and a
weight-free ``Window`` layer as two siblings; the torch side (nest_torch.py) wraps the same MLP
in a ``Kernel`` module that applies the window inline and returns the filter transposed. The
MLP's weights are held by the MLP alone here and by both ``kernel`` and ``kernel.mlp`` there:
the MLP pairs with the call of its own output shape, ``kernel.mlp``. Before that, a causal
depthwise convolution pads inside the layer here (``padding=K-1``, the tail trimmed after it) and
before it there (``F.pad``): inputs and outputs of the two calls differ in shape, their values
agree in a window.

PADIFF_BUG (this side): paddle_trim_head -> the convolution's output trimmed at the head
(``[K-1:]``) instead of the tail: a shifted, non-causal filter, made in the model's own code."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import D, S, bug, hidden
from paddle import nn

E, HID, K = 5, 12, 3


def positions() -> np.ndarray:
    t = np.linspace(0.0, 1.0, S, dtype="float32")[:, None]
    f = np.arange(1, (E - 1) // 2 + 1, dtype="float32")[None, :]
    return np.concatenate([t, np.sin(np.pi * f * t), np.cos(np.pi * f * t)], axis=1).astype("float32")


class Window(nn.Layer):
    def __init__(self):
        super().__init__()
        rate = np.linspace(0.5, 3.0, D, dtype="float32")[None, :]
        self.register_buffer("rate", paddle.to_tensor(rate))
        self.register_buffer("t", paddle.to_tensor(positions()[:, :1]))

    def forward(self, h):  # [S, D]
        return h * paddle.exp(-self.t * self.rate)


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.register_buffer("pos", paddle.to_tensor(positions()))
        self.causal = nn.Conv1D(D, D, K, padding=K - 1, groups=D)
        self.filter_mlp = nn.Sequential(nn.Linear(E, HID), nn.Tanh(), nn.Linear(HID, D))
        self.window = Window()
        self.mix = nn.Linear(D, D)
        self.norm = nn.LayerNorm(D)

    def forward(self, x):  # [B, S, D]
        c = self.causal(x.transpose([0, 2, 1]))
        c = c[:, :, K - 1 :] if bug() == "paddle_trim_head" else c[:, :, :S]
        x = x + c.transpose([0, 2, 1])
        k = self.window(self.filter_mlp(self.pos))  # [S, D]
        return F.gelu(self.mix(self.norm(x) * k.unsqueeze(0)))


def model():
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(hidden()),), {}


def loss(out):
    return (out * out).mean()
