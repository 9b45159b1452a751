"""Torch side of swiglu_paddle.py: a Llama-style MLP, ``gate_proj`` and ``up_proj`` apart and an
``act_fn`` module.

PADIFF_BUG (this side): torch_act_gelu -> the MLP's activation is GELU."""
import torch
from _common import bug, hidden
from torch import nn

D, H, N = 16, 24, 2
BUGS = ("", "torch_act_gelu")


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(D, H, bias=False)
        self.up_proj = nn.Linear(D, H, bias=False)
        self.down_proj = nn.Linear(H, D, bias=False)
        self.act_fn = nn.GELU() if bug() == "torch_act_gelu" else nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.post_norm = nn.LayerNorm(D)
        self.mlp = MLP()

    def forward(self, x):
        return x + self.mlp(self.post_norm(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Layer() for _ in range(N)])
        self.out = nn.Linear(D, 4)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.out(x)


def model():
    if bug() not in BUGS:
        raise ValueError(f"swiglu torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()),), {}


def loss(out):
    return out.pow(2).mean()
