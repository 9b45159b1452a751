"""Hand-written port, torch side: a tiny ResNeSt (split-attention network) classifier (written by "person B").

The same math as port_resnest_paddle.py, re-implemented by hand in the style of the original
zhanghang1989 ResNeSt code (resnest/torch/models/splat.py, resnet.py): input `images`
[2, 3, 16, 16] (positional), a 3x3 stem, two bottlenecks (16 -> 32 stride 1, 32 -> 64 stride 2
with avd and an avg-down shortcut), global average pooling and `fc` Linear(64, 10): logits
[2, 10].

Torch idioms on this side:
- root `ResNet`: `conv1`, `bn1`, `relu` (nn.ReLU, called once for the stem), `layer1`, `layer2`
  (nn.Sequential of one `Bottleneck` each), `avgpool` nn.AdaptiveAvgPool2d(1), `fc`.
- `Bottleneck` registers `conv1`, `bn1`, `avd_layer` (nn.AvgPool2d(3, 2, padding=1), block 2
  only; count_include_pad defaults to True), `conv2` (SplAtConv2d), `conv3`, `bn3`, `relu`
  (nn.ReLU, called 2 times by the block), `downsample` = nn.Sequential([nn.AvgPool2d(2, 2,
  ceil_mode=True, count_include_pad=False),] nn.Conv2d 1x1, nn.BatchNorm2d). With avd_first off
  the pool runs after conv2.
- `SplAtConv2d(channels, channels, 3, groups=2, radix=2)`: `conv` nn.Conv2d(C, 2C, 3,
  groups=4, bias=False), `bn0`, `relu` (nn.ReLU, called twice), `fc1` nn.Conv2d(C, 16, 1,
  groups=2), `bn1` nn.BatchNorm2d(16), `fc2` nn.Conv2d(16, 2C, 1, groups=2), `rsoftmax`
  (`rSoftMax`). The splits are torch.split(x, C, dim=1) summed with Python's sum; the gap is
  F.adaptive_avg_pool2d inline; the attention stays [B, *, 1, 1].
- `rSoftMax`: view(batch, cardinality, radix, -1).transpose(1, 2), F.softmax(dim=1),
  reshape(batch, -1).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_rsoftmax_no_transpose -> rSoftMax views fc2's output as (batch, radix, cardinality, -1)
                                 and soft-maxes dim 1 without the transpose, so the softmax pairs
                                 channels across cardinal groups instead of the radix splits of
                                 one group
  torch_avd_first             -> block 2 is built with avd_first=True: the avd pool runs BEFORE
                                 the split-attention conv instead of after it
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

NUM_CLASSES = 10
BATCH, SIZE = 2, 16
OWN_BUGS = {"torch_rsoftmax_no_transpose", "torch_avd_first"}
OTHER_BUGS = {"paddle_avd_exclusive", "paddle_attn_bn_eps"}


class rSoftMax(nn.Module):
    def __init__(self, radix, cardinality, no_transpose=False):
        super().__init__()
        self.radix = radix
        self.cardinality = cardinality
        self.no_transpose = no_transpose

    def forward(self, x):
        batch = x.size(0)
        if self.radix > 1:
            if self.no_transpose:
                x = x.view(batch, self.radix, self.cardinality, -1)
            else:
                x = x.view(batch, self.cardinality, self.radix, -1).transpose(1, 2)
            x = F.softmax(x, dim=1)
            x = x.reshape(batch, -1)
        else:
            x = torch.sigmoid(x)
        return x


class SplAtConv2d(nn.Module):
    def __init__(self, in_channels, channels, kernel_size, stride=1, padding=0, groups=1, bias=True,
                 radix=2, reduction_factor=4, rsoftmax_no_transpose=False):
        super().__init__()
        inter_channels = max(in_channels * radix // reduction_factor, 16)
        self.radix = radix
        self.cardinality = groups
        self.channels = channels
        self.conv = nn.Conv2d(in_channels, channels * radix, kernel_size, stride, padding,
                              groups=groups * radix, bias=bias)
        self.bn0 = nn.BatchNorm2d(channels * radix)
        self.relu = nn.ReLU(inplace=True)
        self.fc1 = nn.Conv2d(channels, inter_channels, 1, groups=self.cardinality)
        self.bn1 = nn.BatchNorm2d(inter_channels)
        self.fc2 = nn.Conv2d(inter_channels, channels * radix, 1, groups=self.cardinality)
        self.rsoftmax = rSoftMax(radix, groups, rsoftmax_no_transpose)

    def forward(self, x):
        x = self.conv(x)
        x = self.bn0(x)
        x = self.relu(x)
        batch, rchannel = x.shape[:2]
        splited = torch.split(x, rchannel // self.radix, dim=1)
        gap = sum(splited)
        gap = F.adaptive_avg_pool2d(gap, 1)
        gap = self.fc1(gap)
        gap = self.bn1(gap)
        gap = self.relu(gap)
        atten = self.fc2(gap)
        atten = self.rsoftmax(atten).view(batch, -1, 1, 1)
        attens = torch.split(atten, rchannel // self.radix, dim=1)
        out = sum([att * split for (att, split) in zip(attens, splited)])
        return out.contiguous()


class Bottleneck(nn.Module):
    expansion = 2

    def __init__(self, inplanes, planes, stride=1, downsample=None, radix=2, cardinality=2,
                 avd=True, avd_first=False, rsoftmax_no_transpose=False):
        super().__init__()
        group_width = planes
        self.conv1 = nn.Conv2d(inplanes, group_width, kernel_size=1, bias=False)
        self.bn1 = nn.BatchNorm2d(group_width)
        self.avd = avd and stride > 1
        self.avd_first = avd_first
        if self.avd:
            self.avd_layer = nn.AvgPool2d(3, stride, padding=1)
            stride = 1
        self.conv2 = SplAtConv2d(group_width, group_width, kernel_size=3, stride=stride, padding=1,
                                 groups=cardinality, bias=False, radix=radix,
                                 rsoftmax_no_transpose=rsoftmax_no_transpose)
        self.conv3 = nn.Conv2d(group_width, planes * self.expansion, kernel_size=1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        residual = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        if self.avd and self.avd_first:
            out = self.avd_layer(out)
        out = self.conv2(out)
        if self.avd and not self.avd_first:
            out = self.avd_layer(out)
        out = self.conv3(out)
        out = self.bn3(out)
        if self.downsample is not None:
            residual = self.downsample(x)
        out += residual
        out = self.relu(out)
        return out


class ResNet(nn.Module):
    def __init__(self, num_classes=NUM_CLASSES, avd_first_layer2=False, rsoftmax_no_transpose=False):
        super().__init__()
        self.rsoftmax_no_transpose = rsoftmax_no_transpose
        self.inplanes = 16
        self.conv1 = nn.Conv2d(3, 16, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = self._make_layer(16, stride=1)
        self.layer2 = self._make_layer(32, stride=2, avd_first=avd_first_layer2)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(64, num_classes)

    def _make_layer(self, planes, stride=1, avd_first=False):
        downsample = None
        if stride != 1 or self.inplanes != planes * Bottleneck.expansion:
            down_layers = []
            if stride != 1:
                down_layers.append(nn.AvgPool2d(kernel_size=stride, stride=stride, ceil_mode=True,
                                                count_include_pad=False))
            down_layers.append(nn.Conv2d(self.inplanes, planes * Bottleneck.expansion, kernel_size=1,
                                         stride=1, bias=False))
            down_layers.append(nn.BatchNorm2d(planes * Bottleneck.expansion))
            downsample = nn.Sequential(*down_layers)
        block = Bottleneck(self.inplanes, planes, stride, downsample=downsample, avd_first=avd_first,
                           rsoftmax_no_transpose=self.rsoftmax_no_transpose)
        self.inplanes = planes * Bottleneck.expansion
        return nn.Sequential(block)

    def forward(self, x):
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.fc(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_resnest torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = ResNet(avd_first_layer2=bug == "torch_avd_first",
               rsoftmax_no_transpose=bug == "torch_rsoftmax_no_transpose")
    return m.eval()


def _images():
    rng = np.random.default_rng(35)
    return rng.standard_normal((BATCH, 3, SIZE, SIZE)).astype("float32")


def inputs():
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()
