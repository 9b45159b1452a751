"""DenseNet-169, paddle.vision side: random init (no download), BN-calibrated (see _calib.py),
eval, 10 classes. Held-out family (set 50, see NOTES-set50-h143.md).

PADIFF_BUG=paddle_bf16 plants this side's bug (a small one): the output of one convolution deep in
the net, the 1x1 conv of the third transition (tr_conv4_blk.conv_ac_func._conv, 1280 -> 640
channels at 4x4; torch features.transition3.conv), is rounded to bfloat16 and back to float32, as
if that one layer ran under a bfloat16 autocast.
"""
import os
import types

import numpy as np
import paddle
from _calib import calibrate_paddle
from paddle.vision.models import densenet169


def _forward_bf16(self, x):
    out = paddle.nn.Conv2D.forward(self, x)
    return paddle.cast(paddle.cast(out, "bfloat16"), "float32")


def model():
    paddle.seed(0)
    m = densenet169(num_classes=10)
    calibrate_paddle(m)  # BN running stats := calibration-batch stats; leaves eval mode
    if os.environ.get("PADIFF_BUG", "") == "paddle_bf16":
        conv = m.tr_conv4_blk.conv_ac_func._conv
        object.__setattr__(conv, "forward", types.MethodType(_forward_bf16, conv))
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    return (output**2).mean()
