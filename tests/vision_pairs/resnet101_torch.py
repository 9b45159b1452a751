"""ResNet-101, torchvision side: weights=None, BN-calibrated (see _calib.py), eval, 10 classes.
Held-out family (set 50, see NOTES-set50-h143.md).

Planted bug (PADIFF_BUG): kernel_flip -- see resnet101_truth.json.
"""
import os
import types

import numpy as np
import torch
from _calib import calibrate_torch
from _tv import torchvision  # torchvision from <repo>/.vision-site, see _tv.py


def _forward_flipped(self, x):
    # true convolution instead of cross-correlation: the 3x3 kernel is used rotated by 180 degrees
    return self._conv_forward(x, torch.flip(self.weight, dims=(2, 3)), self.bias)


def model():
    torch.manual_seed(0)
    m = torchvision.models.resnet101(num_classes=10, weights=None)
    calibrate_torch(m)  # BN running stats := calibration-batch stats; leaves eval mode
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "kernel_flip":  # layer3.10.conv2 (3x3, 256 channels, 4x4 map) flips its kernel
        conv = m.layer3[10].conv2
        conv.forward = types.MethodType(_forward_flipped, conv)
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    return (output**2).mean()
