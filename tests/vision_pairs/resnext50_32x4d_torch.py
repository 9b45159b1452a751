"""ResNeXt-50 32x4d, torchvision side: weights=None, BN-calibrated (see _calib.py), eval, 10 classes.

Planted bugs (PADIFF_BUG): stride_v1, maxpool_ceil -- see resnext50_32x4d_truth.json.
"""
import os

import numpy as np
import torch
from _calib import calibrate_torch
from _tv import torchvision  # torchvision from <repo>/.vision-site, see _tv.py


def model():
    torch.manual_seed(0)
    m = torchvision.models.resnext50_32x4d(num_classes=10, weights=None)
    calibrate_torch(m)  # BN running stats := calibration-batch stats; leaves eval mode
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "stride_v1":  # ResNet v1 placement: layer3.0 strides in the 1x1 conv1, not the 3x3 conv2
        m.layer3[0].conv1.stride = (2, 2)
        m.layer3[0].conv2.stride = (1, 1)
    elif bug == "maxpool_ceil":  # stem MaxPool2d(3, 2, 1) with ceil_mode=True: 32x32 -> 17x17, not 16x16
        m.maxpool.ceil_mode = True
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    return (output**2).mean()
