"""Torch side of encode_paddle.py: the encoding ordered ``[x, sin of every band, cos of every band]``,
each dimension's bands together; the first layer and its ReLU in an ``nn.Sequential``; the skip layer (``mix``)
reads ``[h, enc]``; the head is a Linear on the concatenation.

PADIFF_BUG (this side): torch_skip_tanh -> the skip layer's activation is tanh."""
import numpy as np
import torch
from _common import bug
from torch import nn

BANDS, W = 3, 8


def points() -> np.ndarray:
    return np.random.default_rng(0).uniform(-1, 1, size=(32, 3)).astype("float32")


class Encoding(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("freqs", 2.0 ** torch.arange(BANDS, dtype=torch.float32), persistent=False)

    def forward(self, x):
        scaled = (x[..., None] * self.freqs).flatten(-2)  # [n, 3 * BANDS], dimension-major
        return torch.cat([x, torch.sin(scaled), torch.cos(scaled)], dim=-1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        n = 3 + 6 * BANDS
        self.encoding = Encoding()
        self.trunk = nn.Sequential(nn.Linear(n, W), nn.ReLU())
        self.mix = nn.Linear(W + n, W)
        self.out = nn.Linear(W + n, 4)

    def forward(self, x):
        e = self.encoding(x)
        h = self.mix(torch.cat([self.trunk(e), e], dim=-1))
        h = torch.tanh(h) if bug() == "torch_skip_tanh" else torch.relu(h)
        return self.out(torch.cat([h, e], dim=-1))


def model():
    if bug() not in ("", "paddle_pi", "paddle_relu_after_cat", "torch_skip_tanh"):
        raise ValueError(f"encode torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(points()),), {}


def loss(out):
    return out.mean()
