"""Hand-written port, torch side: a tiny HRNet stage for keypoint heatmaps (written by "person B",
in the style of the official pose HRNet code).

Input [2, 3, 32, 32] -> 5 keypoint heatmaps [2, 5, 8, 8]. nn.BatchNorm2d(eps=1e-5,
momentum=0.1) everywhere through the `bn()` helper, eval mode.

    root `PoseHighResNet`
      stem        nn.Sequential(Conv2d(3, 16, 3, 2), BN, ReLU, Conv2d(16, 16, 3, 2), BN, ReLU)
      transition  nn.ModuleDict {"high": Sequential(Conv2d(16, 8, 3, 1), BN, ReLU),
                                 "low":  Sequential(Conv2d(16, 16, 3, 2), BN, ReLU)}
      stage2      `HighResolutionModule`: FLAT names
                    branch_high  BasicBlock(8)    conv1, bn1, conv2, bn2, relu (nn.ReLU module,
                    branch_low   BasicBlock(16)   called twice per block)
                    fuse         nn.ModuleDict {"low_to_high": Sequential(Conv2d(16, 8, 1), BN,
                                 nn.Upsample(scale_factor=2, mode="nearest")), "high_to_low":
                                 Sequential(Conv2d(8, 16, 3, 2), BN)}
                    relu         nn.ReLU module (after each fused sum)
      head        `HeatmapHead`: F.interpolate(scale_factor=2, bilinear, align_corners=False) of
                  the low branch, torch.cat([high, low_up], 1), `proj` Conv2d(24, 5, 1) with bias

PADIFF_BUG (this side's bugs; the paddle side's names are accepted and ignored, any other name
raises ValueError):
  torch_bn_eps_1e3         -> the `bn()` helper builds nn.BatchNorm2d(c, eps=1e-3, momentum=0.01)
                              (the TF/Keras batch-norm config copied): every BN of the model;
                              precision-level in eval mode
  torch_head_concat_order  -> the head concatenates [low_up, high] instead of [high, low_up]
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

STEM_C, HIGH_C, LOW_C, N_KPT = 16, 8, 16, 5
OWN_BUGS = {"torch_bn_eps_1e3", "torch_head_concat_order"}
OTHER_BUGS = {"paddle_fuse_bilinear", "paddle_block_relu_before_add"}
_KERAS_BN = False


def bn(c):
    if _KERAS_BN:
        return nn.BatchNorm2d(c, eps=1e-3, momentum=0.01)
    return nn.BatchNorm2d(c, eps=1e-5, momentum=0.1)


def conv3x3(cin, cout, stride=1):
    return nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = conv3x3(c, c)
        self.bn1 = bn(c)
        self.conv2 = conv3x3(c, c)
        self.bn2 = bn(c)
        self.relu = nn.ReLU()

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + x)


class HighResolutionModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.branch_high = BasicBlock(HIGH_C)
        self.branch_low = BasicBlock(LOW_C)
        self.fuse = nn.ModuleDict({
            "low_to_high": nn.Sequential(nn.Conv2d(LOW_C, HIGH_C, 1, bias=False), bn(HIGH_C),
                                         nn.Upsample(scale_factor=2, mode="nearest")),
            "high_to_low": nn.Sequential(conv3x3(HIGH_C, LOW_C, 2), bn(LOW_C)),
        })
        self.relu = nn.ReLU()

    def forward(self, x):
        high, low = self.branch_high(x[0]), self.branch_low(x[1])
        return [self.relu(high + self.fuse["low_to_high"](low)),
                self.relu(self.fuse["high_to_low"](high) + low)]


class HeatmapHead(nn.Module):
    def __init__(self, concat_swapped=False):
        super().__init__()
        self.concat_swapped = concat_swapped
        self.proj = nn.Conv2d(HIGH_C + LOW_C, N_KPT, 1)

    def forward(self, feats):
        high, low = feats
        low_up = F.interpolate(low, scale_factor=2, mode="bilinear", align_corners=False)
        parts = [low_up, high] if self.concat_swapped else [high, low_up]
        return self.proj(torch.cat(parts, dim=1))


class PoseHighResNet(nn.Module):
    def __init__(self, concat_swapped=False):
        super().__init__()
        self.stem = nn.Sequential(
            conv3x3(3, STEM_C, 2), bn(STEM_C), nn.ReLU(),
            conv3x3(STEM_C, STEM_C, 2), bn(STEM_C), nn.ReLU(),
        )
        self.transition = nn.ModuleDict({
            "high": nn.Sequential(conv3x3(STEM_C, HIGH_C), bn(HIGH_C), nn.ReLU()),
            "low": nn.Sequential(conv3x3(STEM_C, LOW_C, 2), bn(LOW_C), nn.ReLU()),
        })
        self.stage2 = HighResolutionModule()
        self.head = HeatmapHead(concat_swapped)

    def forward(self, x):
        x = self.stem(x)
        feats = [self.transition["high"](x), self.transition["low"](x)]
        return self.head(self.stage2(feats))


def model():
    global _KERAS_BN
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_hrnet_tiny torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    _KERAS_BN = bug == "torch_bn_eps_1e3"
    try:
        m = PoseHighResNet(concat_swapped=bug == "torch_head_concat_order")
    finally:
        _KERAS_BN = False
    return m.eval()


def _image():
    return np.random.default_rng(3).standard_normal((2, 3, 32, 32)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # heatmaps [2, 5, 8, 8]
    return (output**2).mean()
