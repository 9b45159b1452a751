"""The same relative-position scores with the table computed for the input's length by a module
of its own (as HF's NeZha does in ``relative_positions_encoding``).
PADIFF_BUG=clip: the relative distances clipped at 2 instead of 4, in the table module."""
import torch
import torch.nn.functional as F
from _common import D, bug, hidden
from torch import nn


class RelTable(nn.Module):
    """Built in the framework's default dtype, as library code does (no dtype given)."""

    def forward(self, n: int) -> torch.Tensor:
        c = 2 if bug() == "clip" else 4
        rel = (torch.arange(n)[None, :] - torch.arange(n)[:, None]).clamp(-c, c)
        return torch.sin(rel[..., None] * (1.0 + torch.arange(D) / D))


class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k = nn.Linear(D, D), nn.Linear(D, D)
        self.rel = RelTable()

    def forward(self, x):
        q, k = self.q(x), self.k(x)
        s = q @ k.transpose(-1, -2) + torch.einsum("bid,ijd->bij", q, self.rel(x.shape[1]))
        return F.softmax(s / D**0.5, dim=-1) @ x


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = Attn()
        self.norm = nn.LayerNorm(D)

    def forward(self, x):
        return self.norm(x + self.attn(x))


def model():
    torch.manual_seed(0)
    return Model().eval()


def inputs():
    return torch.from_numpy(hidden())


def loss(out):
    return (out[..., : D // 2] ** 2).mean()
