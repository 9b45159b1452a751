"""The self-attention of qkv_paddle.py, torch side, with separate q, k and v projections."""
import torch
import torch.nn.functional as F
from _common import D, hidden
from torch import nn

HEADS = 4


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v, self.out = (nn.Linear(D, D) for _ in range(4))

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = (f(x).reshape(b, s, HEADS, D // HEADS).transpose(1, 2) for f in (self.q, self.k, self.v))
        p = F.softmax(q @ k.transpose(-1, -2) / (D // HEADS) ** 0.5, dim=-1)
        return self.out((p @ v).transpose(1, 2).reshape(b, s, D))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn, self.norm = Attention(), nn.LayerNorm(D)

    def forward(self, x):
        return self.norm(x + self.attn(x))


def model():
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()),)
