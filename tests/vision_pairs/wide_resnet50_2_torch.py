"""Wide ResNet-50-2, torchvision side: weights=None, BN-calibrated (see _calib.py), eval, 10 classes.

Planted bugs (PADIFF_BUG): bn_eps, no_residual -- see wide_resnet50_2_truth.json.
"""
import os
import types

import numpy as np
import torch
from _calib import calibrate_torch
from _tv import torchvision  # torchvision from <repo>/.vision-site, see _tv.py


def _forward_no_residual(self, x):
    # torchvision's Bottleneck.forward without `out += identity` (no downsample in this block)
    out = self.relu(self.bn1(self.conv1(x)))
    out = self.relu(self.bn2(self.conv2(out)))
    out = self.bn3(self.conv3(out))
    return self.relu(out)


def model():
    torch.manual_seed(0)
    m = torchvision.models.wide_resnet50_2(num_classes=10, weights=None)
    calibrate_torch(m)  # BN running stats := calibration-batch stats; leaves eval mode
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "bn_eps":  # paddle's BatchNorm2D(c, momentum, epsilon) order copied: eps=0.9
        m.layer1[1].bn2.eps = 0.9
    elif bug == "no_residual":  # layer2.2 forgets its skip connection
        blk = m.layer2[2]
        blk.forward = types.MethodType(_forward_no_residual, blk)
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    return (output**2).mean()
