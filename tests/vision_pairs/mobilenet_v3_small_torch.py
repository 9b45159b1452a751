"""MobileNetV3-Small, torchvision side: weights=None, BN-calibrated (see _calib.py), eval, 10 classes.

Planted bugs (PADIFF_BUG): act, bn_eps -- see mobilenet_v3_small_truth.json.
"""
import os

import numpy as np
import torch
from _calib import calibrate_torch
from _tv import torchvision  # torchvision from <repo>/.vision-site, see _tv.py


def model():
    torch.manual_seed(0)
    m = torchvision.models.mobilenet_v3_small(num_classes=10, weights=None)
    calibrate_torch(m)  # BN running stats := calibration-batch stats; leaves eval mode
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "act":  # ReLU instead of Hardswish after the expand conv of features.4
        m.features[4].block[0][2] = torch.nn.ReLU()
    elif bug == "bn_eps":  # paddle's BatchNorm2D(c, momentum, epsilon) order copied: eps=0.99
        m.features[2].block[1][1].eps = 0.99
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    return (output**2).mean()
