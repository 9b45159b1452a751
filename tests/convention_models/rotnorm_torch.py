"""The decoder of rotnorm_paddle.py written the way another library writes it: ``nn.LayerNorm``
(its weight keeps ``1 + g``, ones at initialisation), one fused ``to_qkv`` Linear, rotary
embeddings in the interleaved layout (features 2j and 2j + 1 rotated together) from cos/sin
tables each attention keeps.

PADIFF_BUG: torch_rope_base (this side: rotary frequencies from base 1000, not 10000)."""
import numpy as np
import torch
import torch.nn.functional as F
from _common import B, S, V, bug
from torch import nn

D, H, N = 16, 2, 2
HD = D // H


def tables(n, base):
    inv = 1.0 / (base ** (np.arange(0, HD, 2, dtype="float64") / HD))
    f = np.outer(np.arange(n, dtype="float64"), inv)  # [n, HD/2]
    return torch.tensor(np.cos(f), dtype=torch.float32), torch.tensor(np.sin(f), dtype=torch.float32)


def rope(x, cos, sin):
    x = x.reshape(*x.shape[:-1], HD // 2, 2)
    a, b = x[..., 0], x[..., 1]
    return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.to_qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)
        cos, sin = tables(64, 1000.0 if bug() == "torch_rope_base" else 10000.0)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, x):
        b, s, _ = x.shape
        cos, sin = self.cos, self.sin
        q, k, v = self.to_qkv(x).view(b, s, 3, H, HD).permute(2, 0, 3, 1, 4)
        q, k = rope(q, cos[:s], sin[:s]), rope(k, cos[:s], sin[:s])
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, s, D))


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(D)
        self.attention = SelfAttention()
        self.ln2 = nn.LayerNorm(D)
        self.mlp = nn.Sequential(nn.Linear(D, 2 * D), nn.GELU(), nn.Linear(2 * D, D))
        self.ln3 = nn.LayerNorm(D)

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        x = x + self.mlp(self.ln2(x))
        return self.ln3(x)


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        self.layers = nn.ModuleList([Layer() for _ in range(N)])
        self.lm_head = nn.Linear(D, V)

    def forward(self, ids):
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(x)


def model():
    if bug() not in ("", "paddle_norm_plain", "torch_rope_base"):
        raise ValueError(f"rotnorm torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    net = Decoder()
    g = torch.Generator().manual_seed(9)
    with torch.no_grad():
        for m in net.modules():  # trained-looking norms: scales around 1, shifts nonzero
            if isinstance(m, nn.LayerNorm):
                m.weight.copy_(1.0 + 0.2 * torch.randn(D, generator=g))
                m.bias.copy_(0.2 * torch.randn(D, generator=g))
    return net.eval()


def inputs():
    ids = np.random.default_rng(0).integers(1, V, size=(B, S)).astype("int64")
    return (torch.tensor(ids),), {}


def loss(out):
    return out.pow(2).mean()
