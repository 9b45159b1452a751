"""DenseNet-121, torchvision side: weights=None, BN-calibrated (see _calib.py), eval, 10 classes.

Planted bugs (PADIFF_BUG): trans_pool, stem_ceil, bn_eps_sqrt -- see densenet121_truth.json.
"""
import os
import types

import numpy as np
import torch
from _calib import calibrate_torch
from _tv import torchvision  # torchvision from <repo>/.vision-site, see _tv.py


def _bn_forward_eps_outside(self, x):
    # hand-written inference BatchNorm: (x - mean) / (sqrt(var) + eps) instead of / sqrt(var + eps)
    shape = (1, -1, 1, 1)
    inv = 1.0 / (self.running_var.sqrt() + self.eps)
    return (x - self.running_mean.view(shape)) * (inv * self.weight).view(shape) + self.bias.view(shape)


def model():
    torch.manual_seed(0)
    m = torchvision.models.densenet121(num_classes=10, weights=None)
    calibrate_torch(m)  # BN running stats := calibration-batch stats; leaves eval mode
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "trans_pool":  # max instead of average pooling in the second transition
        m.features.transition2.pool = torch.nn.MaxPool2d(kernel_size=2, stride=2)
    elif bug == "stem_ceil":  # stem max pool with ceil_mode=True (caffe habit): 32x32 -> 17x17, not 16x16
        m.features.pool0.ceil_mode = True
    elif bug == "bn_eps_sqrt":  # stem norm0 divides by sqrt(var) + eps, not sqrt(var + eps)
        bn = m.features.norm0
        bn.forward = types.MethodType(_bn_forward_eps_outside, bn)
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    return (output**2).mean()
