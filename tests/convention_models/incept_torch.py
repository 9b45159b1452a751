"""The torch side of incept_paddle.py, torchvision-fashion: Conv2d, BatchNorm2d and ReLU modules
in Sequentials; the 1x1 convolution of the first branch and the 3x3 branch's reduction fused into
one (``reduce``, 7 channels: the first branch's 4, then the reduction's 3), split after it; the
pool branch a Sequential holding the pool and a Sequential of its own.

PADIFF_BUG: torch_concat_swapped (this side: the block concatenates the 3x3 branch before the
1x1 branch)."""
import torch
from _common import bug, image
from torch import nn

C = 8


def conv_bn(cin, cout, k):
    return nn.Sequential(nn.Conv2d(cin, cout, k, padding=k // 2, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.reduce = conv_bn(C, 7, 1)
        self.branch3 = nn.Sequential(conv_bn(3, 6, 3))  # room for a second 3x3, as in a factorised 5x5
        self.branch_pool = nn.Sequential(nn.MaxPool2d(3, 1, padding=1), conv_bn(C, 2, 1))

    def forward(self, x):
        one, red = self.reduce(x).split([4, 3], dim=1)
        three = self.branch3(red)
        parts = [three, one] if bug() == "torch_concat_swapped" else [one, three]
        return torch.cat([*parts, self.branch_pool(x)], dim=1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = conv_bn(3, C, 3)
        self.block = Block()
        self.mix = nn.Conv2d(12, 4, 1)
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        return self.head(self.mix(self.block(self.stem(x))).mean(dim=(2, 3)))


def model():
    if bug() not in ("", "torch_concat_swapped"):
        raise ValueError(f"incept torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return out.pow(2).mean()
