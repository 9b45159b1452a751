"""The torch side of layerscale_paddle.py: the block keeps its layer scales as parameters of its
own, ``gamma2`` (the MLP's) registered before ``gamma1`` (the attention's).

PADIFF_BUG (this side): torch_head_gelu_tanh -> the head's GELU uses the tanh approximation."""
import torch
from _common import D, bug, hidden
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.gamma2 = nn.Parameter(torch.full((D,), 0.5))
        self.gamma1 = nn.Parameter(torch.full((D,), 0.5))
        self.norm = nn.LayerNorm(D)
        self.attn = nn.Linear(D, D)
        self.mlp = nn.Linear(D, D)

    def forward(self, x):
        x = x + self.gamma1 * torch.tanh(self.attn(self.norm(x)))
        return x + self.gamma2 * self.mlp(x)


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(D, 4)

    def forward(self, x):
        approximate = "tanh" if bug() == "torch_head_gelu_tanh" else "none"
        return nn.functional.gelu(self.fc(x), approximate=approximate)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(D, D)
        self.block = Block()
        self.head = Head()

    def forward(self, x):
        return self.head(self.block(self.embed(x)))


def model():
    if bug() not in ("", "torch_head_gelu_tanh"):
        raise ValueError(f"layerscale torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()),), {}
