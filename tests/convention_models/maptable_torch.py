"""Torch side of maptable_paddle.py: the position table ``[1, c, h, w]`` is added to the map.

PADIFF_BUG: paddle_mlp_relu (the paddle side's)."""
import torch
from _common import bug, image
from torch import nn

C, H, W = 4, 4, 4


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, C, 2, stride=2)
        self.pos_embed = nn.Parameter(torch.randn(1, C, H, W))
        self.ln = nn.LayerNorm(C)
        self.mlp = nn.Sequential(nn.Linear(C, 2 * C), nn.GELU(), nn.Linear(2 * C, C))
        self.out = nn.Linear(C, 5)

    def forward(self, x):
        t = (self.stem(x) + self.pos_embed).flatten(2).transpose(1, 2)
        t = t + self.mlp(self.ln(t))
        return self.out(t.mean(dim=1))


def model():
    if bug() not in ("", "paddle_mlp_relu"):
        raise ValueError(f"maptable torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return torch.from_numpy(image())


def loss(out):
    return out.mean()
