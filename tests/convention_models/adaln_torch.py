"""Torch side of adaln_paddle.py: the block takes the conditioning vector as it is and applies
SiLU inside, in ``ada = Sequential(SiLU, Linear)``.

PADIFF_BUG (this side): torch_no_one -> the modulation scales by ``scale``, not ``1 + scale``."""
import numpy as np
import torch
from _common import D, bug, hidden
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(D, D)
        self.ada = nn.Sequential(nn.SiLU(), nn.Linear(D, 2 * D))
        self.norm = nn.LayerNorm(D, elementwise_affine=False)

    def forward(self, x, c):
        shift, scale = self.ada(c).unsqueeze(1).chunk(2, dim=-1)
        gain = scale if bug() == "torch_no_one" else 1 + scale
        return x + self.fc(self.norm(x) * gain + shift)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.cond = nn.Linear(4, D)
        self.block = Block()

    def forward(self, x, y):
        return self.block(x, self.cond(y))


def cond() -> np.ndarray:
    return np.random.default_rng(1).standard_normal((2, 4)).astype("float32")


def model():
    if bug() not in ("", "torch_no_one"):
        raise ValueError(f"adaln torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()), torch.from_numpy(cond())), {}


def loss(out):
    return out.mean()
