"""Torch side of tcn_paddle.py: ``repeats.{r}.{b}``, ``nn.GroupNorm(1, C)`` and one fused
``res_skip_conv`` (residual half first)."""
import numpy as np
import torch
from _common import bug
from torch import nn

C, T, R, X = 8, 12, 2, 2


class TemporalBlock(nn.Module):
    def __init__(self, swap):
        super().__init__()
        self.conv1x1 = nn.Conv1d(C, C, 1)
        self.prelu = nn.PReLU()
        self.norm = nn.GroupNorm(1, C, eps=1e-8)
        self.res_skip_conv = nn.Conv1d(C, 2 * C, 1)
        self.swap = swap

    def forward(self, x):
        out = self.res_skip_conv(self.norm(self.prelu(self.conv1x1(x))))
        res, skip = torch.chunk(out, 2, dim=1)
        if self.swap:
            res, skip = skip, res
        return x + res, skip


class Net(nn.Module):
    def __init__(self, swap):
        super().__init__()
        self.repeats = nn.ModuleList([nn.ModuleList([TemporalBlock(swap) for _ in range(X)]) for _ in range(R)])

    def forward(self, x):
        skips = 0
        for repeat in self.repeats:
            for block in repeat:
                x, skip = block(x)
                skips = skips + skip
        return skips


def model():
    if bug() not in ("", "torch_res_skip_swapped"):
        raise ValueError(f"tcn torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net(bug() == "torch_res_skip_swapped").eval()


def inputs():
    return (torch.from_numpy(np.random.default_rng(0).standard_normal((2, C, T)).astype("float32")),), {}


def loss(out):
    return out.pow(2).mean()
