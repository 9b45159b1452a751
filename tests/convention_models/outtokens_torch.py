"""Torch side of outtokens_paddle.py: the output tokens in one ``nn.Embedding(1 + M, D)``, an
attention class of its own holding a bare ``in_proj_weight`` [3 * D / 2, D] (q | k | v rows,
torch's MultiheadAttention style) and an ``out_proj``, a score head registered before it as an
unnamed ``nn.Sequential`` whose first Linear [D, D] is as large as q | k, and the per-token MLPs as
stacks ``w1``, ``w2`` [M, D, D], ``w3`` [M, D, K] with biases, used as ``x @ w[i]``."""
import math

import torch
from _common import bug, hidden
from torch import nn
from torch.nn import functional as F

D = 16
M, K, HEADS = 3, 4, 2
INNER = D // 2


class PackedAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.in_proj_weight = nn.Parameter(torch.randn(3 * INNER, D) / math.sqrt(D))
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * INNER))
        self.out_proj = nn.Linear(INNER, D)

    def forward(self, q, k, v):
        wq, wk, wv = self.in_proj_weight.chunk(3)
        bq, bk, bv = self.in_proj_bias.chunk(3)
        b = q.shape[0]
        q, k, v = (F.linear(t, w, bias).view(b, -1, HEADS, INNER // HEADS).transpose(1, 2)
                   for t, w, bias in ((q, wq, bq), (k, wk, bk), (v, wv, bv)))
        out = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, -1, INNER)
        return self.out_proj(out)


class TokenMLPs(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1, self.b1 = nn.Parameter(torch.randn(M, D, D) / 4), nn.Parameter(torch.zeros(M, D))
        self.w2, self.b2 = nn.Parameter(torch.randn(M, D, D) / 4), nn.Parameter(torch.zeros(M, D))
        self.w3, self.b3 = nn.Parameter(torch.randn(M, D, K) / 4), nn.Parameter(torch.zeros(M, K))

    def forward(self, t):  # t [b, M, D]
        x = torch.relu(torch.einsum("bmd,mde->bme", t, self.w1) + self.b1)
        x = torch.relu(torch.einsum("bmd,mde->bme", x, self.w2) + self.b2)
        return torch.einsum("bmd,mde->bme", x, self.w3) + self.b3


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.score_head = nn.Sequential(nn.Linear(D, D), nn.ReLU(), nn.Linear(D, D), nn.ReLU(), nn.Linear(D, 1))
        self.output_tokens = nn.Embedding(1 + M, D)
        self.attn = PackedAttention()
        self.hyper = TokenMLPs()

    def forward(self, x):
        tokens = self.output_tokens.weight.unsqueeze(0).expand(x.shape[0], -1, -1)
        t = tokens + self.attn(tokens, x, x)
        return self.score_head(t[:, 0]), self.hyper(t[:, 1:])


def model():
    if bug() not in ("", "paddle_attn_scale"):
        raise ValueError(f"outtokens torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return torch.from_numpy(hidden())


def loss(out):
    return (out[0] ** 2).mean() + (out[1] ** 2).mean()
