"""ResNet-18, paddle.vision side: random init (no download), BN-calibrated (see _calib.py),
eval, 10 classes.

PADIFF_BUG=bn_eps plants this side's bug: epsilon 0.9 in layer2.1.bn1.
"""
import os

import numpy as np
import paddle
from _calib import calibrate_paddle
from paddle.vision.models import resnet18


def model():
    paddle.seed(0)
    m = resnet18(num_classes=10)
    calibrate_paddle(m)  # BN running stats := calibration-batch stats; leaves eval mode
    if os.environ.get("PADIFF_BUG", "") == "bn_eps":
        m.layer2[1].bn1._epsilon = 0.9
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    return (output**2).mean()
