"""Torch side of epsilons_paddle.py: the Linears in a list, the three epsilons one vector of the model.

PADIFF_BUG (this side): torch_eps_reversed -> block k reads eps[2 - k]."""
import torch
from _common import bug, hidden
from torch import nn

D, N = 16, 3


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(D, D) for _ in range(N)])
        self.eps = nn.Parameter(torch.zeros(N))

    def forward(self, x):
        for k, lin in enumerate(self.layers):
            e = self.eps[N - 1 - k] if bug() == "torch_eps_reversed" else self.eps[k]
            x = torch.tanh(lin((1 + e) * x))
        return x


def model():
    if bug() not in ("", "torch_eps_reversed"):
        raise ValueError(f"epsilons torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()),), {}


def loss(out):
    return out.mean()
