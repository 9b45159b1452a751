"""The torch side of cellloop_paddle.py: the loop calls a step module whose own code makes the
cell's input and applies the GRU update by hand (``gru_x``/``gru_h`` Linears, gates z, r, n).

PADIFF_BUG (this side): torch_blend_flipped -> the new state keeps z of the candidate and 1 - z of
the old state (the blend the other way round)."""
import numpy as np
import torch
from _common import B, bug
from torch import nn

C, H, STEPS = 8, 6, 3


class Step(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(H)
        self.proj = nn.Linear(H, C)
        self.gru_x = nn.Linear(C, 3 * H)
        self.gru_h = nn.Linear(H, 3 * H)

    def forward(self, x, h):
        u = self.proj(self.norm(h)) * x
        xz, xr, xn = self.gru_x(u).chunk(3, dim=-1)
        hz, hr, hn = self.gru_h(h).chunk(3, dim=-1)
        z, r = torch.sigmoid(xz + hz), torch.sigmoid(xr + hr)
        n = torch.tanh(xn + r * hn)
        if bug() == "torch_blend_flipped":
            return z * n + (1 - z) * h
        return (1 - z) * n + z * h


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(C, H)
        self.step = Step()
        self.head = nn.Linear(H, 3)

    def forward(self, x):
        h = torch.tanh(self.embed(x))
        for _ in range(STEPS):
            h = self.step(x, h)
        return self.head(h)


def model():
    if bug() not in ("", "torch_blend_flipped"):
        raise ValueError(f"cellloop torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def features() -> np.ndarray:
    return np.random.default_rng(5).standard_normal((B, C)).astype("float32")


def inputs():
    return (torch.from_numpy(features()),), {}


def loss(out):
    return out.pow(2).mean()
