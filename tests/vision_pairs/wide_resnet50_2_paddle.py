"""Wide ResNet-50-2, paddle.vision side: random init (no download), BN-calibrated (see _calib.py),
eval, 10 classes.

PADIFF_BUG=dilation plants this side's bug: layer3.2.conv2 dilated 2 (padding 2).
See wide_resnet50_2_truth.json.
"""
import os

import numpy as np
import paddle
from _calib import calibrate_paddle
from paddle.vision.models import wide_resnet50_2


def model():
    paddle.seed(0)
    m = wide_resnet50_2(num_classes=10)
    calibrate_paddle(m)  # BN running stats := calibration-batch stats; leaves eval mode
    if os.environ.get("PADIFF_BUG", "") == "dilation":  # 3x3 conv built with dilation=2, padding=2
        conv = m.layer3[2].conv2
        conv._dilation = [2, 2]
        conv._updated_padding = [2, 2]
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    return (output**2).mean()
