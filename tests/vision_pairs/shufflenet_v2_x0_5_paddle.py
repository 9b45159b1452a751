"""ShuffleNetV2 x0.5, paddle.vision side: random init (no download), BN-calibrated (see _calib.py),
eval, 10 classes.

PADIFF_BUG=act plants this side's bug: Swish instead of ReLU after the first 1x1 conv of the
second branch of block 3_1 (the first, downsampling, block of stage 3).
PADIFF_BUG=paddle_split_order: block 2_3 (stride 1) unpacks its channel split in the other order, so
the branch convolves the first half and the second half is passed through.
"""
import os
import types

import numpy as np
import paddle
from _calib import calibrate_paddle
from paddle.vision.models import shufflenet_v2_x0_5
from paddle.vision.models.shufflenetv2 import channel_shuffle


def _forward_split_swapped(self, inputs):
    # paddle.vision's InvertedResidual.forward (stride 1) with the split unpacked as (x2, x1)
    x2, x1 = paddle.split(inputs, num_or_sections=[inputs.shape[1] // 2, inputs.shape[1] // 2], axis=1)
    x2 = self._conv_pw(x2)
    x2 = self._conv_dw(x2)
    x2 = self._conv_linear(x2)
    out = paddle.concat([x1, x2], axis=1)
    return channel_shuffle(out, 2)


def model():
    paddle.seed(0)
    m = shufflenet_v2_x0_5(num_classes=10)
    calibrate_paddle(m)  # BN running stats := calibration-batch stats; leaves eval mode
    if os.environ.get("PADIFF_BUG", "") == "act":
        m._sub_layers["3_1"]._conv_pw_2[2] = paddle.nn.Swish()
    elif os.environ.get("PADIFF_BUG", "") == "paddle_split_order":
        blk = m._sub_layers["2_3"]
        object.__setattr__(blk, "forward", types.MethodType(_forward_split_swapped, blk))
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    return (output**2).mean()
