"""ResNet-34, torchvision side: weights=None, BN-calibrated (see _calib.py), eval, 10 classes.
Held-out family (set 50, see NOTES-set50-h143.md).

Planted bug (PADIFF_BUG): same_pad -- see resnet34_truth.json.
"""
import os
import types

import numpy as np
import torch
import torch.nn.functional as F
from _calib import calibrate_torch
from _tv import torchvision  # torchvision from <repo>/.vision-site, see _tv.py


def _forward_same_pad(self, x):
    # TensorFlow "SAME" padding for a stride-2 3x3 conv on an even map: pad 0 top/left, 1 bottom/right
    # (instead of PyTorch's symmetric padding=1); same output shape, the sampling grid moves by one pixel
    return F.conv2d(F.pad(x, (0, 1, 0, 1)), self.weight, self.bias, self.stride, 0, self.dilation, self.groups)


def model():
    torch.manual_seed(0)
    m = torchvision.models.resnet34(num_classes=10, weights=None)
    calibrate_torch(m)  # BN running stats := calibration-batch stats; leaves eval mode
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "same_pad":  # layer2.0.conv1 (3x3, stride 2, 64 -> 128, 16x16 -> 8x8) with TF-SAME padding
        conv = m.layer2[0].conv1
        conv.forward = types.MethodType(_forward_same_pad, conv)
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    return (output**2).mean()
