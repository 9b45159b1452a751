"""DenseNet-121, torchvision side: weights=None, BN-calibrated (see _calib.py), eval, 10 classes.

Planted bugs (PADIFF_BUG): trans_pool, stem_ceil -- see densenet121_truth.json.
"""
import os

import numpy as np
import torch
from _calib import calibrate_torch
from _tv import torchvision  # torchvision from <repo>/.vision-site, see _tv.py


def model():
    torch.manual_seed(0)
    m = torchvision.models.densenet121(num_classes=10, weights=None)
    calibrate_torch(m)  # BN running stats := calibration-batch stats; leaves eval mode
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "trans_pool":  # max instead of average pooling in the second transition
        m.features.transition2.pool = torch.nn.MaxPool2d(kernel_size=2, stride=2)
    elif bug == "stem_ceil":  # stem max pool with ceil_mode=True (caffe habit): 32x32 -> 17x17, not 16x16
        m.features.pool0.ceil_mode = True
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    return (output**2).mean()
