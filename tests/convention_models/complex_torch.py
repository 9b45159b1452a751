"""Torch side of complex_paddle.py: the real and imaginary parts as two parameters.

PADIFF_BUG (this side): torch_conjugate -> the imaginary part enters with its sign flipped."""
import torch
from _common import bug, hidden
from torch import nn

D, K = 16, 8


class SpectralMix(nn.Module):
    def __init__(self):
        super().__init__()
        self.W_real = nn.Parameter(torch.randn(D, K) * 0.3)
        self.W_imag = nn.Parameter(torch.randn(D, K) * 0.3)

    def forward(self, x):
        im_w = -self.W_imag if bug() == "torch_conjugate" else self.W_imag
        re, im = x @ self.W_real, x @ im_w
        return torch.sqrt(re * re + im * im + 1e-6) * torch.tanh(re - im)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.mix = SpectralMix()
        self.head = nn.Linear(K, 4)

    def forward(self, x):
        return self.head(self.mix(x))


def model():
    if bug() not in ("", "torch_conjugate"):
        raise ValueError(f"complex torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()),), {}


def loss(out):
    return out.pow(2).mean()
