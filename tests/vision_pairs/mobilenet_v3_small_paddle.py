"""MobileNetV3-Small, paddle.vision side: random init (no download), BN-calibrated (see _calib.py), eval, 10 classes.

PADIFF_BUG=no_residual plants this side's bug: blocks.5 skips its residual add. See mobilenet_v3_small_truth.json.
PADIFF_BUG=paddle_se_no_clip: the squeeze-excitation gate of blocks.10 is a hand-written hard sigmoid
x / 6 + 0.5 without the clip to [0, 1].
"""
import os

import numpy as np
import paddle
from _calib import calibrate_paddle
from paddle.vision.models import mobilenet_v3_small


def model():
    paddle.seed(0)
    m = mobilenet_v3_small(num_classes=10)
    calibrate_paddle(m)  # BN running stats := calibration-batch stats; leaves eval mode
    if os.environ.get("PADIFF_BUG", "") == "no_residual":  # x = linear_conv(...) without + identity
        m.blocks[5].use_res_connect = False
    elif os.environ.get("PADIFF_BUG", "") == "paddle_se_no_clip":  # hard sigmoid written as x / 6 + 0.5
        gate = m.blocks[10].mid_se.scale_activation
        object.__setattr__(gate, "forward", lambda x: x / 6.0 + 0.5)
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    return (output**2).mean()
