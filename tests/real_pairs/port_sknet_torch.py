"""Hand-written port, torch side: a tiny Selective Kernel network (SKNet) classifier (written by "person B").

The same math as port_sknet_paddle.py, re-implemented by hand in the style of the common
pytorch SKNet code (implus / pppLang): images [2, 3, 16, 16] -> logits [2, 10]; a conv-BN-ReLU
stem (3 -> 16), two SK bottleneck units (16 -> 16 with 2 branches; 16 -> 32, stride 2 on the SK
branches, 3 branches, projection shortcut), global average pool, Linear(32, 10).

SK unit: branch m = grouped 3x3 conv (4 groups, dilation m + 1, padding m + 1) -> BN -> ReLU;
U = sum of the branches; s = global average pool of U; z = ReLU(BN(1x1 conv C -> d, no bias)),
d = max(C // 2, 8); one fused 1x1 conv d -> M * C (with bias) gives the logits, viewed as
[B, M, C, 1, 1], softmax over dim 1 (the branches); V = sum over branches of attention * U_m.

Torch idioms on this side:
- root `SKNet`: `stem` nn.Sequential(Conv2d, BatchNorm2d, ReLU), `layer1`, `layer2` (two
  `SKUnit` attributes, no container), `pool` nn.AdaptiveAvgPool2d(1), `fc` Linear(32, 10).
- `SKUnit` registers `conv1` nn.Sequential(1x1 conv, BN, ReLU), `sk` (SKConv), `conv3`
  nn.Sequential(1x1 conv, BN), `shortcut` (an EMPTY nn.Sequential for the identity unit, else
  nn.Sequential(1x1 conv stride 2, BN)) and `relu` nn.ReLU, in that order.
- `SKConv` registers `convs` (ModuleList of nn.Sequential(Conv2d, BatchNorm2d, ReLU)), `gap`
  nn.AdaptiveAvgPool2d(1), `fc` nn.Sequential(Conv2d(C, d, 1, bias=False), BatchNorm2d(d),
  ReLU) working on [B, C, 1, 1], `fcs` = ONE Conv2d(d, M * C, 1) for all branches (rows
  m*C:(m+1)*C belong to branch m), and `softmax` nn.Softmax(dim=1). The branch outputs are
  stacked to [B, M, C, H, W] and reduced with a sum over dim 1.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_gap_max       -> SKConv's squeeze pool is built as nn.AdaptiveMaxPool2d(1) instead of
                         nn.AdaptiveAvgPool2d(1) (a CBAM-style max pool)
  torch_stride_on_1x1 -> the strided unit puts its stride on the first 1x1 conv (`conv1`, the
                         original ResNet v1 placement) instead of on the SK branches
"""
import os

import numpy as np
import torch
from torch import nn

NUM_CLASSES = 10
BATCH, IMG = 2, 16
OWN_BUGS = {"torch_gap_max", "torch_stride_on_1x1"}
OTHER_BUGS = {"paddle_softmax_over_channels", "paddle_squeeze_bn_eps"}


class SKConv(nn.Module):
    def __init__(self, features, M=2, G=4, r=2, stride=1, L=8, gap_max=False):
        super().__init__()
        d = max(features // r, L)
        self.M, self.features = M, features
        self.convs = nn.ModuleList([
            nn.Sequential(
                nn.Conv2d(features, features, kernel_size=3, stride=stride, padding=1 + i, dilation=1 + i,
                          groups=G, bias=False),
                nn.BatchNorm2d(features),
                nn.ReLU(inplace=False),
            )
            for i in range(M)
        ])
        self.gap = nn.AdaptiveMaxPool2d(1) if gap_max else nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Sequential(nn.Conv2d(features, d, kernel_size=1, bias=False), nn.BatchNorm2d(d),
                                nn.ReLU(inplace=False))
        self.fcs = nn.Conv2d(d, M * features, kernel_size=1)
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        batch_size = x.shape[0]
        feats = torch.stack([conv(x) for conv in self.convs], dim=1)  # [B, M, C, H, W]
        feats_U = torch.sum(feats, dim=1)
        feats_Z = self.fc(self.gap(feats_U))  # [B, d, 1, 1]
        attention_vectors = self.fcs(feats_Z).view(batch_size, self.M, self.features, 1, 1)
        attention_vectors = self.softmax(attention_vectors)
        return torch.sum(feats * attention_vectors, dim=1)


class SKUnit(nn.Module):
    def __init__(self, in_features, out_features, M, stride=1, gap_max=False, stride_on_1x1=False):
        super().__init__()
        s1, s2 = (stride, 1) if stride_on_1x1 else (1, stride)
        self.conv1 = nn.Sequential(nn.Conv2d(in_features, out_features, 1, stride=s1, bias=False),
                                   nn.BatchNorm2d(out_features), nn.ReLU(inplace=False))
        self.sk = SKConv(out_features, M=M, G=4, r=2, stride=s2, L=8, gap_max=gap_max)
        self.conv3 = nn.Sequential(nn.Conv2d(out_features, out_features, 1, bias=False),
                                   nn.BatchNorm2d(out_features))
        if stride == 1 and in_features == out_features:
            self.shortcut = nn.Sequential()
        else:
            self.shortcut = nn.Sequential(nn.Conv2d(in_features, out_features, 1, stride=stride, bias=False),
                                          nn.BatchNorm2d(out_features))
        self.relu = nn.ReLU(inplace=False)

    def forward(self, x):
        out = self.conv3(self.sk(self.conv1(x)))
        return self.relu(out + self.shortcut(x))


class SKNet(nn.Module):
    def __init__(self, gap_max=False, stride_on_1x1=False):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16),
                                  nn.ReLU(inplace=False))
        self.layer1 = SKUnit(16, 16, M=2, stride=1, gap_max=gap_max)
        self.layer2 = SKUnit(16, 32, M=3, stride=2, gap_max=gap_max, stride_on_1x1=stride_on_1x1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, NUM_CLASSES)

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        return self.fc(torch.flatten(self.pool(x), 1))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_sknet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = SKNet(gap_max=bug == "torch_gap_max", stride_on_1x1=bug == "torch_stride_on_1x1")
    return m.eval()


def _images():
    return np.random.default_rng(33).standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
