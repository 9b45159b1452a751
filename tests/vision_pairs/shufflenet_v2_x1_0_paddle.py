"""ShuffleNetV2 x1.0, paddle.vision side: random init (no download), BN-calibrated (see _calib.py),
eval, 10 classes. Held-out family (set 50, see NOTES-set50-h143.md).

PADIFF_BUG=paddle_bn_relu plants this side's bug: the BatchNorm after the depthwise conv of block
3_4 (3_4._conv_dw.1, torch stage3.3.branch2.4), which has no activation, returns relu(bn(x)), as a
paddle.nn.BatchNorm(C, act="relu") written where a plain BatchNorm2D was meant.
"""
import os
import types

import numpy as np
import paddle
import paddle.nn.functional as F
from _calib import calibrate_paddle
from paddle.vision.models import shufflenet_v2_x1_0


def _forward_bn_relu(self, x):
    return F.relu(paddle.nn.BatchNorm2D.forward(self, x))


def model():
    paddle.seed(0)
    m = shufflenet_v2_x1_0(num_classes=10)
    calibrate_paddle(m)  # BN running stats := calibration-batch stats; leaves eval mode
    if os.environ.get("PADIFF_BUG", "") == "paddle_bn_relu":
        bn = m._sub_layers["3_4"]._conv_dw[1]
        object.__setattr__(bn, "forward", types.MethodType(_forward_bn_relu, bn))
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    return (output**2).mean()
