"""The torch side of tables_paddle.py: each stage a module of its own holding its position
table as a grid ``[1, c, h, w]``, added to the patch grid before it is flattened into tokens.

PADIFF_BUG: torch_pos2_transposed (stage two's table added with its height and width swapped)."""
import torch
from _common import bug, image
from torch import nn
from torch.nn import functional as F


class Stage(nn.Module):
    def __init__(self, cin, c, side, swapped=False):
        super().__init__()
        self.proj = nn.Conv2d(cin, c, 2, stride=2)
        self.pos_embed = nn.Parameter(torch.zeros(1, c, side, side))
        self.mixer = nn.Linear(c, c)
        self.swapped = swapped

    def forward(self, g):
        pos = self.pos_embed.transpose(2, 3) if self.swapped else self.pos_embed
        t = (self.proj(g) + pos).flatten(2).transpose(1, 2)
        return F.gelu(self.mixer(t))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.stages = nn.ModuleList([Stage(3, 4, 4), Stage(4, 8, 2, swapped=bug() == "torch_pos2_transposed")])
        self.classifier = nn.Linear(8, 3)

    def forward(self, x):
        t = self.stages[0](x)
        b, _, c = t.shape
        t = self.stages[1](t.transpose(1, 2).reshape(b, c, 4, 4))
        return self.classifier(t.mean(1))


def model():
    if bug() not in ("", "torch_pos2_transposed"):
        raise ValueError(f"tables torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Model().eval()


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return out.pow(2).mean()
