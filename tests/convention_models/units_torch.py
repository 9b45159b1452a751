"""The torch side of units_paddle.py: each block registers its shortcut unit first
(``c1x1_w``: BatchNorm, ReLU, conv with a bias), then ``c1x1_a``, ``c3x3_b``, ``c1x1_c``; the
position bias is the first block's own ``[H*W, C]`` parameter.

PADIFF_BUG: torch_expand_stride (this side: the first block's last 1x1 convolution is built with
stride 2 and the map upsampled back, a porter's attempt at the reference's downsampling),
paddle_spatial_eps (the other side's: accepted, ignored)."""
import torch
import torch.nn.functional as F
from _common import bug, image
from torch import nn


class BnActConv(nn.Module):
    def __init__(self, cin, cout, k=1, groups=1, bias=False, stride=1):
        super().__init__()
        self.bn = nn.BatchNorm2d(cin)
        self.act = nn.ReLU()
        self.conv = nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, groups=groups, bias=bias)

    def forward(self, x):
        return self.conv(self.act(self.bn(x)))


class Block(nn.Module):
    def __init__(self, cin, mid, cout, first=False):
        super().__init__()
        self.c1x1_w = BnActConv(cin, cout, bias=True)
        self.c1x1_a = BnActConv(cin, mid)
        self.c3x3_b = BnActConv(mid, mid, 3, groups=2)
        self.strided = first and bug() == "torch_expand_stride"
        self.c1x1_c = BnActConv(mid, cout, stride=2 if self.strided else 1)
        self.pos_bias = nn.Parameter(torch.zeros(64, cin)) if first else None

    def forward(self, x):
        if self.pos_bias is not None:
            x = x + self.pos_bias.t().reshape(1, -1, 8, 8)
        main = self.c1x1_c(self.c3x3_b(self.c1x1_a(x)))
        if self.strided:
            main = F.interpolate(main, scale_factor=2.0, mode="nearest")
        return self.c1x1_w(x) + main


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv0 = nn.Conv2d(3, 8, 3, padding=1)
        self.stages = nn.Sequential(Block(8, 4, 16, first=True), Block(16, 4, 16))
        self.classifier = nn.Linear(16, 5)

    def forward(self, x):
        return self.classifier(self.stages(self.conv0(x)).mean(dim=(2, 3)))


def model():
    if bug() not in ("", "paddle_spatial_eps", "torch_expand_stride"):
        raise ValueError(f"units torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return out.pow(2).mean()
