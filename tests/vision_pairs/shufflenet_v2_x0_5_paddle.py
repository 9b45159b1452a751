"""ShuffleNetV2 x0.5, paddle.vision side: random init (no download), BN-calibrated (see _calib.py),
eval, 10 classes.

PADIFF_BUG=act plants this side's bug: Swish instead of ReLU after the first 1x1 conv of the
second branch of block 3_1 (the first, downsampling, block of stage 3).
"""
import os

import numpy as np
import paddle
from _calib import calibrate_paddle
from paddle.vision.models import shufflenet_v2_x0_5


def model():
    paddle.seed(0)
    m = shufflenet_v2_x0_5(num_classes=10)
    calibrate_paddle(m)  # BN running stats := calibration-batch stats; leaves eval mode
    if os.environ.get("PADIFF_BUG", "") == "act":
        m._sub_layers["3_1"]._conv_pw_2[2] = paddle.nn.Swish()
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    return (output**2).mean()
