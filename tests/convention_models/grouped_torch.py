"""Torch side of grouped_paddle.py: torchvision-style blocks in a ModuleList; in the first block
the three branch convolutions are one grouped convolution with one BatchNorm over all their
channels, in the second a list of convolutions and a list of BatchNorms (Res2Net's two kinds of
block).

PADIFF_BUG (this side): torch_split_eps -> the first block's branch BatchNorm uses eps 1e-2."""
import torch
import torch.nn.functional as F
from _common import bug, image
from torch import nn

W, C, N = 4, 16, 3
BUGS = ("", "paddle_out_eps", "torch_split_eps")


class Branches(nn.Module):
    def __init__(self, eps=1e-5):
        super().__init__()
        self.conv = nn.Conv2d(N * W, N * W, 3, padding=1, groups=N, bias=False)
        self.bn = nn.BatchNorm2d(N * W, eps=eps)

    def forward(self, x):
        return torch.cat([F.relu(self.bn(self.conv(x[:, : N * W]))), x[:, N * W :]], dim=1)


class ListedBranches(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(W, W, 3, padding=1, bias=False) for _ in range(N)])
        self.bns = nn.ModuleList([nn.BatchNorm2d(W) for _ in range(N)])

    def forward(self, x):
        parts = torch.split(x, W, dim=1)
        outs = [F.relu(bn(conv(p))) for conv, bn, p in zip(self.convs, self.bns, parts)]
        return torch.cat([*outs, parts[-1]], dim=1)


class Block(nn.Module):
    def __init__(self, eps=1e-5, grouped=True):
        super().__init__()
        self.conv1 = nn.Conv2d(C, C, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(C)
        self.branches = Branches(eps) if grouped else ListedBranches()
        self.conv3 = nn.Conv2d(C, C, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(C)

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = self.branches(h)
        return F.relu(self.bn3(self.conv3(h)) + x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, C, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(C)
        self.layers = nn.ModuleList([Block(1e-2 if bug() == "torch_split_eps" else 1e-5), Block(grouped=False)])
        self.fc = nn.Linear(C, 5)

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        for block in self.layers:
            h = block(h)
        return self.fc(h.mean(dim=(2, 3)))


def model():
    if bug() not in BUGS:
        raise ValueError(f"grouped torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return out.pow(2).mean()
