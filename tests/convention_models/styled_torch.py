"""Torch side of styled_paddle.py (a rewrite's layout: ``conv`` with a ``modulation`` child,
``noise`` and ``activate`` modules, weights ``[out, in]``, the convolution ``[1, C, C, 3, 3]``).

PADIFF_BUG (this side): torch_style_no_bias -> the first layer's modulation drops its bias."""
import numpy as np
import torch
import torch.nn.functional as F
from _common import bug
from torch import nn

C, W = 8, 16


class EqualLinear(nn.Module):
    def __init__(self, d_in: int, d_out: int, bias_init: float = 0.0):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d_out, d_in) * d_in ** -0.5)
        self.bias = nn.Parameter(torch.full((d_out,), bias_init))
        self.drop_bias = False

    def forward(self, x):
        return F.linear(x, self.weight, None if self.drop_bias else self.bias)


class ModulatedConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(1, C, C, 3, 3) * 0.2)
        self.modulation = EqualLinear(W, C, bias_init=1.0)

    def forward(self, x, w):
        s = self.modulation(w)
        return F.conv2d(x * s[:, :, None, None], self.weight[0], padding=1)


class NoiseInjection(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.full((1,), 0.3))

    def forward(self, x, noise):
        return x + self.weight * noise


class BiasedLeakyReLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(C) * 0.5)

    def forward(self, x):
        return F.leaky_relu(x + self.bias[None, :, None, None], 0.2)


class StyledConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = ModulatedConv()
        self.noise = NoiseInjection()
        self.activate = BiasedLeakyReLU()

    def forward(self, x, w, noise):
        return self.activate(self.noise(self.conv(x, w), noise))


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.style = nn.Sequential(EqualLinear(8, W), nn.LeakyReLU(0.2), EqualLinear(W, W))
        self.input = nn.Parameter(torch.randn(1, C, 4, 4))
        self.convs = nn.ModuleList([StyledConv(), StyledConv()])
        self.convs[0].conv.modulation.drop_bias = bug() == "torch_style_no_bias"
        for i in range(2):
            noise = np.random.default_rng(i).standard_normal((1, 1, 4, 4)).astype("float32")
            self.register_buffer(f"noise_{i}", torch.from_numpy(noise), persistent=False)

    def forward(self, z):
        w = self.style(z)
        x = self.input.expand(z.shape[0], -1, -1, -1)
        for i, layer in enumerate(self.convs):
            x = layer(x, w, getattr(self, f"noise_{i}"))
        return x


def latent() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((2, 8)).astype("float32")


def model():
    if bug() not in ("", "paddle_noise_unscaled", "torch_style_no_bias"):
        raise ValueError(f"styled torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Generator().eval()


def inputs():
    return (torch.from_numpy(latent()),), {}


def loss(out):
    return out.mean()
