"""The torch side of nest_paddle.py: the filter MLP inside a ``Kernel`` module that windows
its output inline and returns it transposed ``[D, S]``; the causal convolution padded by
``F.pad`` before it is called.

PADIFF_BUG (this side): torch_window_sign -> the window grows instead of decaying
(``exp(t * rate)``)."""
import numpy as np
import torch
import torch.nn.functional as F
from _common import D, S, bug, hidden
from torch import nn

E, HID, K = 5, 12, 3


def positions() -> np.ndarray:
    t = np.linspace(0.0, 1.0, S, dtype="float32")[:, None]
    f = np.arange(1, (E - 1) // 2 + 1, dtype="float32")[None, :]
    return np.concatenate([t, np.sin(np.pi * f * t), np.cos(np.pi * f * t)], axis=1).astype("float32")


class Kernel(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(E, HID), nn.Tanh(), nn.Linear(HID, D))
        self.register_buffer("table", torch.from_numpy(positions()))
        self.register_buffer("decay", torch.linspace(0.5, 3.0, D))

    def forward(self):
        h = self.mlp(self.table)
        t = self.table[:, :1]
        w = torch.exp(t * self.decay) if bug() == "torch_window_sign" else torch.exp(-t * self.decay)
        return (h * w).t()  # [D, S]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.conv = nn.Conv1d(D, D, K, groups=D)
        self.kernel = Kernel()
        self.out = nn.Linear(D, D)

    def forward(self, x):
        x = x + self.conv(F.pad(x.transpose(1, 2), (K - 1, 0))).transpose(1, 2)
        k = self.kernel()
        return F.gelu(self.out(self.ln(x) * k.t()[None]))


def model():
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()),), {}


def loss(out):
    return (out * out).mean()
