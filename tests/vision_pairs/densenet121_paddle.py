"""DenseNet-121, paddle.vision side: random init (no download), BN-calibrated (see _calib.py),
eval, 10 classes.

PADIFF_BUG=bn_eps plants this side's bug: epsilon 0.9 in the second (3x3) BatchNorm of dense
layer 5 of the second dense block. paddle.vision's DenseNet uses paddle.nn.BatchNorm(act="relu"):
the BatchNorm module's output is relu(bn(x)) (torchvision: separate norm and relu modules).
"""
import os

import numpy as np
import paddle
from _calib import calibrate_paddle
from paddle.vision.models import densenet121


def model():
    paddle.seed(0)
    m = densenet121(num_classes=10)
    calibrate_paddle(m)  # BN running stats := calibration-batch stats; leaves eval mode
    if os.environ.get("PADIFF_BUG", "") == "bn_eps":
        m.db_conv_3.conv3_5.bn_ac_func2._batch_norm._epsilon = 0.9
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    return (output**2).mean()
