"""Hand-written port, torch side: a tiny ResNet with CBAM attention in every basic block (written by "person B").

The same math as port_cbam_resnet_paddle.py, re-implemented in the style of timm's CbamModule /
ResNet: input `x` [2, 3, 16, 16] (positional, numpy rng seed 61); stem conv 3x3 (3 -> 16) + BN +
ReLU; stage 0: 2 basic blocks of 16 channels; stage 1: 1 basic block 16 -> 32 with stride 2 and a
1x1 conv + BN projection shortcut; global average pool; linear head (32 -> 10). Output [2, 10].
Block: act2(attn(bn2(conv2(act1(bn1(conv1(x)))))) + shortcut(x)). CBAM (reduction 4): channel
attention x * sigmoid(mlp(avg) + mlp(max)) with one shared MLP, then spatial attention
x * sigmoid(conv7x7(cat([mean, max]))). BatchNorm eps 1e-5.

Torch idioms on this side:
- root `CbamResNet`: `stem` = nn.Sequential(Conv2d, BatchNorm2d, ReLU) (stem.0 / .1 / .2),
  `stages` = nn.Sequential of two nn.Sequential stages of `CbamBasicBlock`, `global_pool`
  nn.AdaptiveAvgPool2d(1) + torch.flatten inline, `head` nn.Linear(32, 10).
- `CbamBasicBlock` registers `shortcut` FIRST (nn.Identity, or nn.Sequential(Conv2d 1x1 stride 2,
  BatchNorm2d) in stages.1.0), then `conv1`, `bn1`, `act1`, `conv2`, `bn2`, `attn`, `act2`.
- `CbamModule`: `channel` (`ChannelAttn`), `spatial` (`SpatialAttn`).
- `ChannelAttn`: the shared MLP is written as 1x1 CONVOLUTIONS: `fc1` Conv2d(C, C/4, 1), `act`
  nn.ReLU, `fc2` Conv2d(C/4, C, 1), and a `gate` nn.Sigmoid module; x.mean((2, 3), keepdim=True)
  and x.amax((2, 3), keepdim=True) inline.
- `SpatialAttn`: the channel pool is inline, cat([x.mean(1), x.amax(1)]) (MEAN FIRST, the
  opposite order of the paddle side: the two input channels of the 7x7 kernel are swapped), `conv`
  Conv2d(2, 1, 7, padding=3), `gate` nn.Sigmoid.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_gate_order_swapped  -> CbamModule applies the spatial attention BEFORE the channel
                               attention
  torch_cbam_after_residual -> the block applies `attn` after adding the shortcut
                               (act2(attn(out + shortcut))) instead of before
"""
import os

import numpy as np
import torch
from torch import nn

STEM_CH, STAGE_CH, DEPTHS, N_CLASSES, RD_RATIO = 16, (16, 32), (2, 1), 10, 4
BATCH, IMG = 2, 16
OWN_BUGS = {"torch_gate_order_swapped", "torch_cbam_after_residual"}
OTHER_BUGS = {"paddle_channel_max_as_avg", "paddle_downsample_bn_eps"}


class ChannelAttn(nn.Module):
    def __init__(self, channels, rd_ratio=RD_RATIO):
        super().__init__()
        rd = channels // rd_ratio
        self.fc1 = nn.Conv2d(channels, rd, 1, bias=True)
        self.act = nn.ReLU(inplace=True)
        self.fc2 = nn.Conv2d(rd, channels, 1, bias=True)
        self.gate = nn.Sigmoid()

    def forward(self, x):
        x_avg = self.fc2(self.act(self.fc1(x.mean((2, 3), keepdim=True))))
        x_max = self.fc2(self.act(self.fc1(x.amax((2, 3), keepdim=True))))
        return x * self.gate(x_avg + x_max)


class SpatialAttn(nn.Module):
    def __init__(self, kernel_size=7):
        super().__init__()
        self.conv = nn.Conv2d(2, 1, kernel_size, padding=kernel_size // 2)
        self.gate = nn.Sigmoid()

    def forward(self, x):
        x_attn = torch.cat([x.mean(dim=1, keepdim=True), x.amax(dim=1, keepdim=True)], dim=1)
        return x * self.gate(self.conv(x_attn))


class CbamModule(nn.Module):
    def __init__(self, channels, swapped=False):
        super().__init__()
        self.swapped = swapped
        self.channel = ChannelAttn(channels)
        self.spatial = SpatialAttn()

    def forward(self, x):
        if self.swapped:
            return self.channel(self.spatial(x))
        return self.spatial(self.channel(x))


class CbamBasicBlock(nn.Module):
    def __init__(self, in_chs, out_chs, stride=1, swapped=False, after_residual=False):
        super().__init__()
        self.after_residual = after_residual
        if stride != 1 or in_chs != out_chs:
            self.shortcut = nn.Sequential(nn.Conv2d(in_chs, out_chs, 1, stride=stride, bias=False),
                                          nn.BatchNorm2d(out_chs))
        else:
            self.shortcut = nn.Identity()
        self.conv1 = nn.Conv2d(in_chs, out_chs, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_chs)
        self.act1 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(out_chs, out_chs, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_chs)
        self.attn = CbamModule(out_chs, swapped)
        self.act2 = nn.ReLU(inplace=True)

    def forward(self, x):
        shortcut = self.shortcut(x)
        y = self.act1(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        if self.after_residual:
            y = self.attn(y + shortcut)
        else:
            y = self.attn(y) + shortcut
        return self.act2(y)


class CbamResNet(nn.Module):
    def __init__(self, swapped=False, after_residual=False):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, STEM_CH, 3, padding=1, bias=False), nn.BatchNorm2d(STEM_CH),
                                  nn.ReLU(inplace=True))
        stages, prev = [], STEM_CH
        for i, (chs, depth) in enumerate(zip(STAGE_CH, DEPTHS)):
            blocks = []
            for j in range(depth):
                stride = 2 if (i > 0 and j == 0) else 1
                blocks.append(CbamBasicBlock(prev, chs, stride, swapped, after_residual))
                prev = chs
            stages.append(nn.Sequential(*blocks))
        self.stages = nn.Sequential(*stages)
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(prev, N_CLASSES)

    def forward(self, x):
        x = self.stages(self.stem(x))
        return self.head(torch.flatten(self.global_pool(x), 1))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_cbam_resnet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = CbamResNet(swapped=bug == "torch_gate_order_swapped", after_residual=bug == "torch_cbam_after_residual")
    return m.eval()


def _image():
    return np.random.default_rng(61).standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()
