"""Torch side of experts_paddle.py: the experts are one batched module taking the routing
weights, holding ``w_in [E, D, H]`` and ``w_out [E, H, D]`` (and their biases).

PADIFF_BUG (this side): none."""
import torch
import torch.nn.functional as F
from _common import D, bug, hidden
from torch import nn

E, H = 3, 24


class Experts(nn.Module):
    def __init__(self):
        super().__init__()
        self.w_in = nn.Parameter(torch.randn(E, D, H) * D**-0.5)
        self.b_in = nn.Parameter(torch.zeros(E, H))
        self.w_out = nn.Parameter(torch.randn(E, H, D) * H**-0.5)
        self.b_out = nn.Parameter(torch.zeros(E, D))

    def forward(self, x, weights):
        h = F.relu(torch.einsum("bsd,edh->bseh", x, self.w_in) + self.b_in)
        y = torch.einsum("bseh,ehd->bsed", h, self.w_out) + self.b_out
        return (y * weights.unsqueeze(-1)).sum(2)


class Moe(nn.Module):
    def __init__(self):
        super().__init__()
        self.experts = Experts()
        self.gate = nn.Linear(D, E, bias=False)

    def forward(self, x):
        logits = self.gate(x)
        top, idx = torch.topk(logits, 2, dim=-1)
        weights = torch.zeros_like(logits).scatter(-1, idx, F.softmax(top, dim=-1))
        return self.experts(x, weights)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(D)
        self.moe = Moe()
        self.head = nn.Linear(D, 4)

    def forward(self, x):
        return self.head(x + self.moe(self.norm(x)))


def model():
    if bug() not in ("", "paddle_moe_no_renorm"):
        raise ValueError(f"experts torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()),), {}


def loss(out):
    return out.mean()
