"""ResNet-101, paddle.vision side: random init (no download), BN-calibrated (see _calib.py),
eval, 10 classes. Held-out family (set 50, see NOTES-set50-h143.md).

PADIFF_BUG=paddle_pad_reflect plants this side's bug: the 3x3 conv layer2.2.conv2 pads its input by
reflection (padding_mode="reflect") instead of with zeros.
"""
import os

import numpy as np
import paddle
from _calib import calibrate_paddle
from paddle.vision.models import resnet101


def model():
    paddle.seed(0)
    m = resnet101(num_classes=10)
    calibrate_paddle(m)  # BN running stats := calibration-batch stats; leaves eval mode
    if os.environ.get("PADIFF_BUG", "") == "paddle_pad_reflect":
        # what Conv2D(..., padding=1, padding_mode="reflect") sets up: F.pad(reflect) + conv with padding 0
        conv = m.layer2[2].conv2
        conv._padding_mode = "reflect"
        conv._reversed_padding_repeated_twice = [1, 1, 1, 1]
        conv._updated_padding = [0, 0]
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    return (output**2).mean()
