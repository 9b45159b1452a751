"""MobileNetV2, torchvision side: weights=None, BN-calibrated (see _calib.py), eval, 10 classes.

Planted bugs (PADIFF_BUG): dw_stride, no_residual, relu6_clamp -- see mobilenet_v2_truth.json.
"""
import os

import numpy as np
import torch
from _calib import calibrate_torch
from _tv import torchvision  # torchvision from <repo>/.vision-site, see _tv.py


def model():
    torch.manual_seed(0)
    m = torchvision.models.mobilenet_v2(num_classes=10, weights=None)
    calibrate_torch(m)  # BN running stats := calibration-batch stats; leaves eval mode
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "dw_stride":  # depthwise conv of features.4 with stride 1 instead of 2
        m.features[4].conv[1][0].stride = (1, 1)
    elif bug == "no_residual":  # features.12 (96 -> 96, stride 1) without its skip connection
        m.features[12].use_res_connect = False
    elif bug == "relu6_clamp":  # last 1x1 conv (320 -> 1280) + BN followed by ReLU, not ReLU6: no clamp at 6
        m.features[18][2] = torch.nn.ReLU(inplace=True)
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    return (output**2).mean()
