"""Torch side of rootnorm_paddle.py: every layer keeps its own LayerNorm (``ln``) where paddle
shares one at the root.

PADIFF_BUG (this side): torch_second_residual -> the second layer forgets its residual;
torch_norms_differ -> the second layer's norm holds other values than the first's (no one module
of paddle's can equal both: seen when torch's trace gives paddle its weights)."""
import torch
import torch.nn.functional as F
from _common import D, bug, hidden
from torch import nn


class Layer(nn.Module):
    def __init__(self, residual=True):
        super().__init__()
        self.ff = nn.Linear(D, D)
        self.ln = nn.LayerNorm(D)
        self.residual = residual

    def forward(self, x):
        y = F.gelu(self.ff(x))
        return self.ln(x + y if self.residual else y)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Layer(), Layer(residual=bug() != "torch_second_residual")])
        self.out = nn.Linear(D, 3)
        if bug() == "torch_norms_differ":
            with torch.no_grad():
                self.layers[1].ln.weight.add_(0.25)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.out(x)


def model():
    if bug() not in ("", "paddle_norm_eps", "torch_second_residual", "torch_norms_differ"):
        raise ValueError(f"rootnorm torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return torch.from_numpy(hidden())


def loss(out):
    return out.mean()
