"""Torch side of ropebuf_paddle.py: one ``Wqkv``, interleaved rotary pairs, tables as buffers."""
import torch
import torch.nn.functional as F
from _common import D, bug, hidden
from torch import nn

HEADS, HD, MAX_LEN = 2, 8, 16


def rotate_pairs(x, cos, sin):
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.Wqkv = nn.Linear(D, 3 * D, bias=False)
        self.out = nn.Linear(D, D, bias=False)
        inv = 1.0 / 10000.0 ** (torch.arange(0, HD, 2, dtype=torch.float32) / HD)
        ang = torch.outer(torch.arange(MAX_LEN, dtype=torch.float32), inv)
        self.register_buffer("rope_cos", ang.cos(), persistent=False)
        self.register_buffer("rope_sin", ang.sin(), persistent=False)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = (t.view(b, s, HEADS, HD).transpose(1, 2) for t in self.Wqkv(x).split(D, dim=-1))
        cos, sin = self.rope_cos[:s], self.rope_sin[:s]
        q, k = rotate_pairs(q, cos, sin), rotate_pairs(k, cos, sin)
        y = F.scaled_dot_product_attention(q, k, v)
        return self.out(y.transpose(1, 2).reshape(b, s, D))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.attn = SelfAttention()
        self.fc = nn.Linear(D, 4)

    def forward(self, x):
        return self.fc(x + self.attn(self.ln(x)))


def model():
    if bug() not in ("", "paddle_rope_base_1e3"):
        raise ValueError(f"ropebuf torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()),), {}


def loss(out):
    return out.mean()
