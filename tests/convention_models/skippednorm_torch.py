"""Torch side of skippednorm_paddle.py under other names.

PADIFF_BUG (this side): torch_mlp_reuses_norm1 -> block 0's MLP reads the first norm's output."""
import torch
import torch.nn.functional as F
from _common import bug, hidden
from torch import nn

D = 16
BUGS = ("", "paddle_mlp_reuses_norm1", "torch_mlp_reuses_norm1")


class Layer(nn.Module):
    def __init__(self, index):
        super().__init__()
        self.index = index
        self.ln_a = nn.LayerNorm(D)
        self.proj = nn.Linear(D, D)
        self.ln_b = nn.LayerNorm(D)
        self.up = nn.Linear(D, 2 * D)
        self.down = nn.Linear(2 * D, D)

    def forward(self, x):
        h = self.ln_a(x)
        out = x + self.proj(h)
        if not (bug() == "torch_mlp_reuses_norm1" and self.index == 0):
            h = self.ln_b(x)
        return out + self.down(F.gelu(self.up(h)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Layer(i) for i in range(2)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def model():
    if bug() not in BUGS:
        raise ValueError(f"skippednorm torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()),), {}


def loss(out):
    return out.pow(2).mean()
