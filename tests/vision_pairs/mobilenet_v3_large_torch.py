"""MobileNetV3-Large, torchvision side: weights=None, BN-calibrated (see _calib.py), eval, 10 classes.

PADIFF_BUG=bn_half plants this side's bug: the BatchNorm after the 1x1 projection conv of
features.9 (paddle blocks.8) runs in float16 (F.batch_norm on half tensors, as after a stray
.half() in a mixed-precision port) and its output is cast back to float32: a precision-level bug.
See mobilenet_v3_large_truth.json.
"""
import os
import types

import numpy as np
import torch
import torch.nn.functional as F
from _calib import calibrate_torch
from _tv import torchvision  # torchvision from <repo>/.vision-site, see _tv.py


def _bn_forward_half(self, x):
    # inference BatchNorm computed in float16, cast back to float32
    h = torch.float16
    y = F.batch_norm(x.to(h), self.running_mean.to(h), self.running_var.to(h), self.weight.to(h),
                     self.bias.to(h), False, 0.0, self.eps)
    return y.to(torch.float32)


def model():
    torch.manual_seed(0)
    m = torchvision.models.mobilenet_v3_large(num_classes=10, weights=None)
    calibrate_torch(m)  # BN running stats := calibration-batch stats; leaves eval mode
    if os.environ.get("PADIFF_BUG", "") == "bn_half":
        bn = m.features[9].block[2][1]
        bn.forward = types.MethodType(_bn_forward_half, bn)
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    return (output**2).mean()
