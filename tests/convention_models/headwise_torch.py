"""Torch side of headwise_paddle.py: separate q, k and v projections.

PADIFF_BUG (this side): torch_no_scale -> the scores are not divided by sqrt(head size)."""
import torch
import torch.nn.functional as F
from _common import D, bug, hidden
from torch import nn

H = 2


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(D, D)
        self.k = nn.Linear(D, D)
        self.v = nn.Linear(D, D)
        self.o = nn.Linear(D, D)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = (f(x).view(b, s, H, D // H).transpose(1, 2) for f in (self.q, self.k, self.v))
        scores = q @ k.transpose(-1, -2)
        if bug() != "torch_no_scale":
            scores = scores / (D // H) ** 0.5
        return self.o((F.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, s, D))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(D)
        self.attn = Attention()

    def forward(self, x):
        return x + self.attn(self.norm(x))


def model():
    if bug() not in ("", "torch_no_scale"):
        raise ValueError(f"headwise torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()),), {}


def loss(out):
    return out.mean()
