"""Torch side of sharedproj_paddle.py: source and target projections packed in one ``lin``."""
import torch
import torch.nn.functional as F
from _common import D, bug, hidden
from torch import nn

H = 12


class PairAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(D, 2 * H)
        self.att = nn.Parameter(torch.randn(1, 1, 1, H) * 0.3)

    def forward(self, x):
        src, dst = self.lin(x).chunk(2, dim=-1)
        e = F.leaky_relu(src.unsqueeze(2) + dst.unsqueeze(1), 0.2)
        a = torch.softmax((e * self.att).sum(-1), dim=-1)
        return a @ src


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = PairAttention()
        self.out = nn.Linear(H, 4)

    def forward(self, x):
        return self.out(F.elu(self.attn(x)))


def model():
    if bug() not in ("", "paddle_leaky_default"):
        raise ValueError(f"sharedproj torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()),), {}


def loss(out):
    return out.mean()
