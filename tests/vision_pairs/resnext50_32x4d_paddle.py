"""ResNeXt-50 32x4d, paddle.vision side: random init (no download), BN-calibrated (see _calib.py),
eval, 10 classes.

PADIFF_BUG=avgpool_max plants this side's bug: global max pool instead of the global average pool.
PADIFF_BUG=paddle_vd_shortcut: layer2.0's downsampling shortcut is PaddleClas' ResNet-vd one: a 2x2
average pool, then the 1x1 conv with stride 1 (instead of the 1x1 conv with stride 2).
See resnext50_32x4d_truth.json.
"""
import os
import types

import numpy as np
import paddle
import paddle.nn.functional as F
from _calib import calibrate_paddle
from paddle.vision.models import resnext50_32x4d


def _conv_forward_vd(self, x):
    # ResNet-vd shortcut: AvgPool2D(2, 2, ceil_mode=True) then the 1x1 conv at stride 1
    x = F.avg_pool2d(x, kernel_size=2, stride=2, padding=0, ceil_mode=True)
    return F.conv2d(x, self.weight, self.bias, stride=1, padding=0)


def model():
    paddle.seed(0)
    m = resnext50_32x4d(num_classes=10)
    calibrate_paddle(m)  # BN running stats := calibration-batch stats; leaves eval mode
    if os.environ.get("PADIFF_BUG", "") == "avgpool_max":  # head pools with max (layer4 map is 2x2)
        m.avgpool = paddle.nn.AdaptiveMaxPool2D((1, 1))
    elif os.environ.get("PADIFF_BUG", "") == "paddle_vd_shortcut":
        conv = m.layer2[0].downsample[0]
        object.__setattr__(conv, "forward", types.MethodType(_conv_forward_vd, conv))
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    return (output**2).mean()
