"""VGG-11 with BatchNorm, torchvision side: vgg11_bn(weights=None), BN-calibrated (see _calib.py),
eval, 10 classes.

Planted bugs (PADIFF_BUG): conv_pad, no_relu -- see vgg11_bn_truth.json.
"""
import os

import numpy as np
import torch
from _calib import calibrate_torch
from _tv import torchvision  # torchvision from <repo>/.vision-site, see _tv.py


def model():
    torch.manual_seed(0)
    m = torchvision.models.vgg11_bn(num_classes=10, weights=None)
    calibrate_torch(m)  # BN running stats := calibration-batch stats; leaves eval mode
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "conv_pad":  # padding 0 instead of 1 in the first 256-channel conv: 16x16 -> 14x14
        m.features[8].padding = (0, 0)
    elif bug == "no_relu":  # the ReLU after the second 256-channel conv+BN is left out
        m.features[13] = torch.nn.Identity()
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    return (output**2).mean()
