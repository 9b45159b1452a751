"""ResNet-34, paddle.vision side: random init (no download), BN-calibrated (see _calib.py),
eval, 10 classes. Held-out family (set 50, see NOTES-set50-h143.md).

PADIFF_BUG=paddle_bn_batch_stats plants this side's bug: in eval, BatchNorm layer3.3.bn1 normalises
with the statistics of the current batch instead of its running stats (use_global_stats=False).
Its momentum is set to 1.0 so that the forward leaves the running stats untouched (paddle updates
them whenever it uses batch statistics).
"""
import os

import numpy as np
import paddle
from _calib import calibrate_paddle
from paddle.vision.models import resnet34


def model():
    paddle.seed(0)
    m = resnet34(num_classes=10)
    calibrate_paddle(m)  # BN running stats := calibration-batch stats; leaves eval mode
    if os.environ.get("PADIFF_BUG", "") == "paddle_bn_batch_stats":
        bn = m.layer3[3].bn1
        bn._use_global_stats = False  # batch statistics even in eval
        bn._momentum = 1.0  # running = 1.0 * running + 0.0 * batch: stats stay as calibrated
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    return (output**2).mean()
