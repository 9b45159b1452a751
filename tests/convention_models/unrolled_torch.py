"""The network of unrolled_paddle.py written another way: tokens ``[b, n, c]`` unrolled so that
the four pixels of every 2x2 window lie in four contiguous runs (a pool is the max over the
runs, and the pooled tokens are again in that order one level down), blocks in one flat list,
q|k|v in one Linear.

PADIFF_BUG: torch_pool_mean (this side: the transition block pools its query by the mean, not
the max); paddle_mlp_relu is the other side's (accepted, ignored)."""
import numpy as np
import torch
import torch.nn.functional as F
from _common import bug
from torch import nn

C0, C1, C2, H = 8, 16, 32, 2


def unroll_order(side):
    """Raster index of each unrolled token: two levels of 2x2 windows (8x8 -> 4x4 -> 2x2)."""
    idx = np.arange(side * side).reshape(side, side)
    for _ in range(2):  # peel a 2x2 level: (dy, dx) outermost, the rest inside
        lead = idx.shape[:-2]
        h, w = idx.shape[-2:]
        idx = idx.reshape(*lead, h // 2, 2, w // 2, 2)
        idx = np.moveaxis(idx, (-3, -1), (0, 1)).reshape(4, *lead, h // 2, w // 2)
        idx = np.moveaxis(idx, 0, len(lead))
    return idx.reshape(-1)


class Attention(nn.Module):
    def __init__(self, dim_in, dim, pool, mean):
        super().__init__()
        self.qkv = nn.Linear(dim_in, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.dim, self.pool, self.mean = dim, pool, mean

    def forward(self, x):  # [b, n, c]
        b, n, _ = x.shape
        hd = self.dim // H
        q, k, v = self.qkv(x).reshape(b, n, 3, H, hd).permute(2, 0, 3, 1, 4)
        if self.pool:
            q = q.view(b, H, 4, n // 4, hd)
            q = q.mean(dim=2) if self.mean else q.max(dim=2).values
        y = F.scaled_dot_product_attention(q, k, v)
        return self.proj(y.transpose(1, 2).reshape(b, -1, self.dim))


class Block(nn.Module):
    def __init__(self, dim_in, dim, pool=False, mean=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim_in)
        self.attn = Attention(dim_in, dim, pool, mean)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.proj = nn.Linear(dim_in, dim) if pool else None

    def forward(self, x):
        n = self.norm1(x)
        if self.proj is not None:
            p = self.proj(n)
            x = p.view(p.shape[0], 4, p.shape[1] // 4, -1).max(dim=1).values
        x = x + self.attn(n)
        return x + self.mlp(self.norm2(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch = nn.Conv2d(3, C0, 2, stride=2)
        mean = bug() == "torch_pool_mean"
        self.blocks = nn.ModuleList([Block(C0, C0), Block(C0, C1, pool=True, mean=mean), Block(C1, C1),
                                     Block(C1, C2, pool=True)])
        self.norm = nn.LayerNorm(C2)
        self.head = nn.Linear(C2, 5)
        self.register_buffer("order", torch.from_numpy(unroll_order(8)), persistent=False)

    def forward(self, img):
        x = self.patch(img).flatten(2).transpose(1, 2)[:, self.order]  # raster -> unrolled
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x).mean(dim=1))


def model():
    if bug() not in ("", "paddle_mlp_relu", "torch_pool_mean"):
        raise ValueError(f"unrolled torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 16, 16)).astype("float32")
    return (torch.tensor(x),), {}


def loss(out):
    return out.pow(2).mean()
