"""MobileNetV3-Large, paddle.vision side: random init (no download), BN-calibrated (see _calib.py),
eval, 10 classes.

PADIFF_BUG=paddle_se_hardswish plants this side's bug: the squeeze-excitation gate of blocks.11
(torch features.12) is nn.Hardswish instead of nn.Hardsigmoid (the two hard-* activations swapped).
See mobilenet_v3_large_truth.json.
"""
import os

import numpy as np
import paddle
from _calib import calibrate_paddle
from paddle.vision.models import mobilenet_v3_large


def model():
    paddle.seed(0)
    m = mobilenet_v3_large(num_classes=10)
    calibrate_paddle(m)  # BN running stats := calibration-batch stats; leaves eval mode
    if os.environ.get("PADIFF_BUG", "") == "paddle_se_hardswish":
        m.blocks[11].mid_se.scale_activation = paddle.nn.Hardswish()
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    return (output**2).mean()
