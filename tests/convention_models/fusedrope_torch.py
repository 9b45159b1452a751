"""The encoder of fusedrope_paddle.py written the way another library writes it: ``query``,
``key`` (no bias) and ``value`` Linears, and rotary embeddings in the half-split layout (feature
j rotated with j + d/2) whose angles each attention computes inline (no table kept).

PADIFF_BUG: torch_rope_base (this side: the angles use base 1000, not 10000);
paddle_mlp_relu is the other side's (accepted, ignored)."""
import numpy as np
import torch
import torch.nn.functional as F
from _common import B, S, bug
from torch import nn

D, H, N = 16, 2, 2
HD = D // H


def rotate(x, base):
    inv = 1.0 / (base ** (torch.arange(0, HD, 2).float() / HD))
    f = torch.outer(torch.arange(x.shape[-2]).float(), inv)
    emb = torch.cat([f, f], dim=-1)
    x1, x2 = x[..., : HD // 2], x[..., HD // 2:]
    return x * emb.cos() + torch.cat([-x2, x1], dim=-1) * emb.sin()


class SelfAttention(nn.Module):
    def __init__(self, base):
        super().__init__()
        self.query = nn.Linear(D, D)
        self.key = nn.Linear(D, D, bias=False)
        self.value = nn.Linear(D, D)
        self.output = nn.Linear(D, D)
        self.base = base

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = (p(x).view(b, s, H, HD).transpose(1, 2) for p in (self.query, self.key, self.value))
        q, k = rotate(q, self.base), rotate(k, self.base)
        y = F.scaled_dot_product_attention(q, k, v)
        return self.output(y.transpose(1, 2).reshape(b, s, D))


class Layer(nn.Module):
    def __init__(self, base):
        super().__init__()
        self.ln1 = nn.LayerNorm(D)
        self.attention = SelfAttention(base)
        self.ln2 = nn.LayerNorm(D)
        self.mlp = nn.Sequential(nn.Linear(D, 2 * D), nn.GELU(), nn.Linear(2 * D, D))

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        base = 1000.0 if bug() == "torch_rope_base" else 10000.0
        self.layers = nn.ModuleList([Layer(base) for _ in range(N)])
        self.final_norm = nn.LayerNorm(D)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.final_norm(x)


def model():
    if bug() not in ("", "paddle_mlp_relu", "torch_rope_base"):
        raise ValueError(f"fusedrope torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Encoder().eval()


def inputs():
    x = np.random.default_rng(0).standard_normal((B, S, D)).astype("float32")
    return (torch.tensor(x),), {}


def loss(out):
    return out.pow(2).mean()
