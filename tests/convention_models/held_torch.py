"""The feed-forward blocks of held_paddle.py, torch side: one ``nn.GELU`` instance held by
every block (``named_modules`` lists it once, as ``blocks.0.act``)."""
import torch
from _common import D, hidden
from torch import nn


class Block(nn.Module):
    def __init__(self, act: nn.Module) -> None:
        super().__init__()
        self.lin1 = nn.Linear(D, 2 * D)
        self.act = act
        self.lin2 = nn.Linear(2 * D, D)

    def forward(self, x):
        return x + self.lin2(self.act(self.lin1(x)))


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        act = nn.GELU()
        self.blocks = nn.ModuleList([Block(act) for _ in range(3)])
        self.head = nn.Linear(D, 4)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def model():
    torch.manual_seed(0)
    return Model().eval()


def inputs():
    return torch.from_numpy(hidden())


def loss(out):
    return (out**2).mean()
