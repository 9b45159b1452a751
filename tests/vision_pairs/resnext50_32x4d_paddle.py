"""ResNeXt-50 32x4d, paddle.vision side: random init (no download), BN-calibrated (see _calib.py),
eval, 10 classes.

PADIFF_BUG=avgpool_max plants this side's bug: global max pool instead of the global average pool.
See resnext50_32x4d_truth.json.
"""
import os

import numpy as np
import paddle
from _calib import calibrate_paddle
from paddle.vision.models import resnext50_32x4d


def model():
    paddle.seed(0)
    m = resnext50_32x4d(num_classes=10)
    calibrate_paddle(m)  # BN running stats := calibration-batch stats; leaves eval mode
    if os.environ.get("PADIFF_BUG", "") == "avgpool_max":  # head pools with max (layer4 map is 2x2)
        m.avgpool = paddle.nn.AdaptiveMaxPool2D((1, 1))
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    return (output**2).mean()
