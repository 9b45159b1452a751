"""Torch side of gates_paddle.py: one Linear over ``[x, context]`` concatenated and a ``Tanh``
module, where paddle adds two Linears' outputs and calls tanh inline.

PADIFF_BUG (this side): torch_act_hardtanh -> the block's activation module is a Hardtanh."""
import torch
from _common import bug, hidden
from torch import nn

D, N = 16, 2


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(2 * D, D)
        self.act = nn.Hardtanh() if bug() == "torch_act_hardtanh" else nn.Tanh()

    def forward(self, x):
        ctx = x.mean(dim=1, keepdim=True).expand_as(x)
        return self.act(self.proj(torch.cat([x, ctx], dim=-1)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(N)])
        self.head = nn.Linear(D, 4)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x)


def model():
    if bug() not in ("", "paddle_ctx_halved", "torch_act_hardtanh"):
        raise ValueError(f"gates torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()),), {}


def loss(out):
    return out.pow(2).mean()
