"""Torch side of posmap_paddle.py: the grid built once, ``[h * w, 2f]``, as a buffer outside the
state dict, projected by a Linear and added to the flattened features.

PADIFF_BUG (this side): torch_grid_cos_first -> the grid's cosines come before its sines."""
import numpy as np
import torch
from _common import bug, image
from torch import nn

F, D, H, W = 3, 12, 8, 8


def grid() -> np.ndarray:
    ys, xs = np.meshgrid(np.arange(H) / H, np.arange(W) / W, indexing="ij")
    freqs = 2.0 ** np.arange(F)
    funcs = (np.cos, np.sin) if bug() == "torch_grid_cos_first" else (np.sin, np.cos)
    parts = [f(np.pi * k * (ys + 2 * xs)) for f in funcs for k in freqs]
    return np.stack(parts, axis=-1).reshape(H * W, 2 * F).astype("float32")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, D, 3, padding=1)
        self.pos = nn.Linear(2 * F, D)
        self.head = nn.Linear(D, 5)
        self.register_buffer("grid", torch.from_numpy(grid()), persistent=False)

    def forward(self, x):
        feats = self.conv(x).flatten(2).transpose(1, 2)
        return self.head(feats + self.pos(self.grid))


def model():
    if bug() not in ("", "torch_grid_cos_first"):
        raise ValueError(f"posmap torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return out.pow(2).mean()
