"""ResNet-18, torchvision side: weights=None, BN-calibrated (see _calib.py), eval, 10 classes.

Planted bugs (PADIFF_BUG): no_residual, maxpool_pad, relu_before_add -- see resnet18_truth.json.
"""
import os
import types

import numpy as np
import torch
from _calib import calibrate_torch
from _tv import torchvision  # torchvision from <repo>/.vision-site, see _tv.py


def _forward_no_residual(self, x):
    # torchvision's BasicBlock.forward without `out += identity`
    out = self.relu(self.bn1(self.conv1(x)))
    out = self.bn2(self.conv2(out))
    return self.relu(out)


def _forward_relu_before_add(self, x):
    # torchvision's BasicBlock.forward with the second ReLU applied before `+ identity`, not after
    out = self.relu(self.bn1(self.conv1(x)))
    out = self.relu(self.bn2(self.conv2(out)))
    return out + x


def model():
    torch.manual_seed(0)
    m = torchvision.models.resnet18(num_classes=10, weights=None)
    calibrate_torch(m)  # BN running stats := calibration-batch stats; leaves eval mode
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "no_residual":  # layer3.1 forgets its skip connection
        blk = m.layer3[1]
        blk.forward = types.MethodType(_forward_no_residual, blk)
    elif bug == "maxpool_pad":  # stem MaxPool2d(3, 2) with padding 0 instead of 1: 32x32 -> 15x15
        m.maxpool.padding = 0
    elif bug == "relu_before_add":  # layer2.1 (no downsample): relu(bn2(conv2(.))) + x instead of relu(bn2(..) + x)
        blk = m.layer2[1]
        blk.forward = types.MethodType(_forward_relu_before_add, blk)
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    return (output**2).mean()
