"""Hand-written port, torch side: a tiny RedNet (involution bottlenecks) classifier (written by "person B").

The same math as port_involution_paddle.py, re-implemented by hand in torchvision ResNet style:
input [2, 3, 16, 16] (positional), stem conv 3x3 + BN + ReLU (16 channels), two involution
bottlenecks (16 -> 8 -> 16, K=3, stride 1; 16 -> 16 -> 32, K=5, stride 2 with a 1x1 stride-2
projection shortcut), global mean, Linear(32, 10): logits [2, 10].

Torch idioms on this side:
- root `RedNet`: `conv1`, `bn1`, `relu` (nn.ReLU, called once here), `layers` (nn.Sequential of
  the two Bottlenecks, called once), `classifier` nn.Linear(32, 10); the global pool is an inline
  x.mean((2, 3)).
- `Bottleneck` registers `downsample` FIRST (nn.Sequential(conv, bn), or None), then `conv1`,
  `bn1`, `conv2` (Involution2d), `bn2`, `conv3`, `bn3`, `relu` (one nn.ReLU called three times).
- `Involution2d`: the kernel generator is ONE nn.Sequential `kernel_gen` = (0) Conv2d 1x1
  C -> C/2 no bias, (1) BatchNorm2d, (2) ReLU, (3) Conv2d 1x1 C/2 -> G*K*K; for stride 2 the
  kernel is generated from F.avg_pool2d(x, 2, 2) inline; the neighbourhoods are gathered by
  F.pad + K*K strided shifted slices (row-major taps: t = i*K + j), stacked on dim 2 and viewed
  as [B, G, C/G, K*K, Ho, Wo].

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_taps_col_major   -> the shifted slices are gathered with the column offset in the outer
                            loop (t = j*K + i), i.e. every kernel is applied transposed
  torch_stride_subsample -> for stride 2 the kernel is generated from x[:, :, ::2, ::2] (strided
                            subsampling) instead of the 2x2 average pool
"""
import os
from collections import OrderedDict

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

BATCH, IMG, NUM_CLASSES = 2, 16, 10
OWN_BUGS = {"torch_taps_col_major", "torch_stride_subsample"}
OTHER_BUGS = {"paddle_kernel_tap_major", "paddle_reduce_bn_eps"}


class Involution2d(nn.Module):
    def __init__(self, channels, kernel_size=3, stride=1, group_channels=4, reduction_ratio=2,
                 col_major=False, subsample=False):
        super().__init__()
        self.channels, self.kernel_size, self.stride = channels, kernel_size, stride
        self.groups = channels // group_channels
        self.col_major, self.subsample = col_major, subsample
        hidden = channels // reduction_ratio
        self.kernel_gen = nn.Sequential(OrderedDict([
            ("0", nn.Conv2d(channels, hidden, 1, bias=False)),
            ("1", nn.BatchNorm2d(hidden)),
            ("2", nn.ReLU(inplace=False)),
            ("3", nn.Conv2d(hidden, kernel_size ** 2 * self.groups, 1)),
        ]))

    def _shifted(self, x, ho, wo):
        k, s = self.kernel_size, self.stride
        xp = F.pad(x, [(k - 1) // 2] * 4)
        if self.col_major:
            offs = [(i, j) for j in range(k) for i in range(k)]
        else:
            offs = [(i, j) for i in range(k) for j in range(k)]
        return torch.stack([xp[:, :, i:i + s * (ho - 1) + 1:s, j:j + s * (wo - 1) + 1:s] for i, j in offs], dim=2)

    def forward(self, x):
        b, c, _h, _w = x.shape
        s, kk, g = self.stride, self.kernel_size ** 2, self.groups
        if s > 1:
            src = x[:, :, ::s, ::s] if self.subsample else F.avg_pool2d(x, s, s)
        else:
            src = x
        kernel = self.kernel_gen(src)
        ho, wo = kernel.shape[-2:]
        kernel = kernel.view(b, g, kk, ho, wo).unsqueeze(2)
        patches = self._shifted(x, ho, wo).view(b, g, c // g, kk, ho, wo)
        return (kernel * patches).sum(dim=3).view(b, c, ho, wo)


class Bottleneck(nn.Module):
    def __init__(self, inplanes, planes, outplanes, kernel_size, stride, inv_kw):
        super().__init__()
        if stride != 1 or inplanes != outplanes:
            self.downsample = nn.Sequential(
                nn.Conv2d(inplanes, outplanes, 1, stride=stride, bias=False), nn.BatchNorm2d(outplanes))
        else:
            self.downsample = None
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = Involution2d(planes, kernel_size, stride, **inv_kw)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, outplanes, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(outplanes)
        self.relu = nn.ReLU()

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + identity)


class RedNet(nn.Module):
    def __init__(self, inv_kw):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu = nn.ReLU()
        self.layers = nn.Sequential(
            Bottleneck(16, 8, 16, kernel_size=3, stride=1, inv_kw=inv_kw),
            Bottleneck(16, 16, 32, kernel_size=5, stride=2, inv_kw=inv_kw),
        )
        self.classifier = nn.Linear(32, NUM_CLASSES)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layers(x)
        return self.classifier(x.mean((2, 3)))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_involution torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    inv_kw = {"col_major": bug == "torch_taps_col_major", "subsample": bug == "torch_stride_subsample"}
    return RedNet(inv_kw).eval()


def _image():
    rng = np.random.default_rng(35)
    return rng.standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
