"""Hand-written port, torch side: the same tiny UNet re-implemented in PyTorch by a second person,
in the style of the popular "Pytorch-UNet" code. 32x32 RGB in, 3 classes out per pixel; widths
8 / 16 / 32.

    inc (3->8) ; down1 = MaxPool + DoubleConv (8->16) ; down2 = MaxPool + DoubleConv (16->32)
    up1: ConvTranspose2d 32->16, cat [skip, up], DoubleConv 32->16
    up2: ConvTranspose2d 16->8,  cat [skip, up], DoubleConv 16->8
    outc: 1x1 Conv2d 8->3

Torch idioms on this side: `DoubleConv` is an `nn.Sequential(Conv, GroupNorm, SiLU, Conv,
GroupNorm, SiLU)` (two SiLU modules), the pooling sits inside `Down.pool_conv` (a Sequential),
`Up` registers its `conv` before its `up` (nn.ConvTranspose2d, weight [in, out, kh, kw], the same
layout as paddle's), GroupNorm eps 1e-5 (torch's default); the decoder is numbered from the top
(`up1` is the deep one: it is paddle's `up2`).

Planted bugs (PADIFF_BUG): see port_unet_truth.json.
"""
import os

import numpy as np
import torch
from torch import nn

GROUPS = 4


class DoubleConv(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__(
            nn.Conv2d(cin, cout, kernel_size=3, padding=1),
            nn.GroupNorm(GROUPS, cout),
            nn.SiLU(),
            nn.Conv2d(cout, cout, kernel_size=3, padding=1),
            nn.GroupNorm(GROUPS, cout),
            nn.SiLU(),
        )


class Down(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.pool_conv = nn.Sequential(nn.MaxPool2d(2), DoubleConv(cin, cout))

    def forward(self, x):
        return self.pool_conv(x)


class Up(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = DoubleConv(2 * cout, cout)
        self.up = nn.ConvTranspose2d(cin, cout, kernel_size=2, stride=2)

    def forward(self, x1, x2):
        x1 = self.up(x1)
        return self.conv(torch.cat([x2, x1], dim=1))


class UNet(nn.Module):
    def __init__(self, n_channels=3, n_classes=3):
        super().__init__()
        self.inc = DoubleConv(n_channels, 8)
        self.down1 = Down(8, 16)
        self.down2 = Down(16, 32)
        self.up1 = Up(32, 16)
        self.up2 = Up(16, 8)
        self.outc = nn.Conv2d(8, n_classes, kernel_size=1)

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down1(x1)
        x3 = self.down2(x2)
        x = self.up1(x3, x2)
        x = self.up2(x, x1)
        return self.outc(x)


def model():
    torch.manual_seed(0)
    m = UNet().eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "skip_order":
        # the shallow decoder level concatenates [upsampled, skip] instead of [skip, upsampled]
        up = m.up2
        up.forward = lambda x1, x2: up.conv(torch.cat([up.up(x1), x2], dim=1))
    elif bug == "silu_relu":
        # the bottleneck DoubleConv's second activation is a ReLU (classic UNet) instead of SiLU
        m.down2.pool_conv[1][5] = nn.ReLU()
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    # per-pixel logits [2, 3, 32, 32] of a 1x1 conv (not normalised): a mean of squares depends on all of it
    return (output**2).mean()
