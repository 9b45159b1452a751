"""VGG-11 with BatchNorm, paddle.vision side: vgg11(batch_norm=True), random init (no download),
BN-calibrated (see _calib.py), eval, 10 classes.

PADIFF_BUG=pool_kind plants this side's bug: the second pooling (features.7) averages instead of
taking the max.
PADIFF_BUG=paddle_dropout_infer: the classifier's second Dropout (classifier.5) uses
mode="downscale_in_infer" (fluid's old default), so in eval it multiplies by 1 - p = 0.5.
"""
import os

import numpy as np
import paddle
from _calib import calibrate_paddle
from paddle.vision.models import vgg11


def model():
    paddle.seed(0)
    m = vgg11(batch_norm=True, num_classes=10)
    calibrate_paddle(m)  # BN running stats := calibration-batch stats; leaves eval mode
    if os.environ.get("PADIFF_BUG", "") == "pool_kind":
        m.features[7] = paddle.nn.AvgPool2D(kernel_size=2, stride=2)
    elif os.environ.get("PADIFF_BUG", "") == "paddle_dropout_infer":  # Dropout(0.5, mode="downscale_in_infer")
        m.classifier[5].mode = "downscale_in_infer"
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    return (output**2).mean()
