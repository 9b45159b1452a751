"""ResNet-50, torchvision side: weights=None, BN-calibrated (see _calib.py, here on a 4x3x160x160
batch), eval, 10 classes, input 2x3x160x160 (see resnet50_paddle.py for why 160).

PADIFF_BUG=no_post_add_relu plants this side's bug: the Bottleneck layer3.1 returns
bn3(conv3(.)) + identity without the ReLU after the residual add (the ending of a pre-activation
ResNet-v2 block copied into a v1 block). See resnet50_truth.json.
"""
import os
import types

import numpy as np
import torch
from _calib import calibrate_torch
from _tv import torchvision  # torchvision from <repo>/.vision-site, see _tv.py

CALIB = (4, 3, 160, 160)


def _forward_no_post_add_relu(self, x):
    # torchvision's Bottleneck.forward without the final self.relu(out)
    identity = x
    out = self.relu(self.bn1(self.conv1(x)))
    out = self.relu(self.bn2(self.conv2(out)))
    out = self.bn3(self.conv3(out))
    if self.downsample is not None:
        identity = self.downsample(x)
    out += identity
    return out


def model():
    torch.manual_seed(0)
    m = torchvision.models.resnet50(num_classes=10, weights=None)
    calibrate_torch(m, CALIB)  # BN running stats := calibration-batch stats; leaves eval mode
    if os.environ.get("PADIFF_BUG", "") == "no_post_add_relu":
        blk = m.layer3[1]
        blk.forward = types.MethodType(_forward_no_post_add_relu, blk)
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 160, 160)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    return (output**2).mean()
