"""Torch side of sublayers_paddle.py: ``Wqkv`` fused, the feed-forward's ``w1``/``w3`` apart,
per-head q/k norms as one [heads, head_dim] weight each, partial rotary interleaved inline.

PADIFF_BUG (this side): torch_ffn_gelu -> GELU in place of SiLU in the feed-forward."""
import numpy as np
import torch
import torch.nn.functional as F
from _common import bug
from torch import nn

D, HEADS, HD, ROT, FF, N = 32, 2, 16, 8, 48, 2
BUGS = ("", "torch_ffn_gelu")


class HeadwiseNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(HEADS, HD))

    def forward(self, x):  # [B, H, S, HD]
        return F.layer_norm(x, (HD,)) * self.weight[:, None, :]


def rotate(x, s):
    inv_freq = 1.0 / 10000.0 ** (torch.arange(0, ROT, 2, dtype=torch.float32) / ROT)
    freqs = torch.outer(torch.arange(s, dtype=torch.float32), inv_freq)
    cos, sin = freqs.cos(), freqs.sin()
    x_rot, x_pass = x[..., :ROT], x[..., ROT:]
    even, odd = x_rot[..., 0::2], x_rot[..., 1::2]
    x_rot = torch.stack((even * cos - odd * sin, odd * cos + even * sin), dim=-1).flatten(-2)
    return torch.cat((x_rot, x_pass), dim=-1)


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.Wqkv = nn.Linear(D, 3 * D)
        self.q_norm = HeadwiseNorm()
        self.k_norm = HeadwiseNorm()
        self.out_proj = nn.Linear(D, D, bias=False)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.Wqkv(x).view(b, s, 3, HEADS, HD).permute(2, 0, 3, 1, 4)
        q, k = rotate(self.q_norm(q), s), rotate(self.k_norm(k), s)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out_proj(y.transpose(1, 2).reshape(b, s, D))


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(D, FF, bias=False)
        self.w3 = nn.Linear(D, FF, bias=False)
        self.w2 = nn.Linear(FF, D, bias=False)

    def forward(self, x):
        act = F.gelu if bug() == "torch_ffn_gelu" else F.silu
        return self.w2(act(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(D)
        self.attn = SelfAttention()
        self.ffn = FeedForward()

    def forward(self, x):
        h = self.norm(x)
        return x + self.attn(h) + self.ffn(h)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(N)])
        self.out = nn.Linear(D, 4)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.out(x)


def model():
    if bug() not in BUGS:
        raise ValueError(f"sublayers torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 8, D)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(out):
    return out.pow(2).mean()
