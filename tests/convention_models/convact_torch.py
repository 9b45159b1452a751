"""The blocks of convact_paddle.py written as ``nn.Sequential(conv, bn, nn.ReLU())``: the
activation is a module of its own here, inline code in paddle's block.

The head is ``nn.Sequential(AdaptiveAvgPool2d, conv, bn, ReLU)`` where paddle pools inline and
calls a projection block.

PADIFF_BUG: paddle_block_no_act and paddle_pool_no_act are the other side's (accepted, ignored)."""
import torch
from _common import bug, image
from torch import nn


def block(cin, cout, k=3):
    return nn.Sequential(nn.Conv2d(cin, cout, k, padding=k // 2, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(block(3, 8), block(8, 8), block(8, 12))
        self.pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), *block(12, 12, k=1))
        self.classifier = nn.Linear(12, 5)

    def forward(self, x):
        return self.classifier(self.pool(self.body(x)).flatten(1))


def model():
    if bug() not in ("", "paddle_block_no_act", "paddle_pool_no_act"):
        raise ValueError(f"convact torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return out.pow(2).mean()
