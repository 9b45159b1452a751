"""VGG-16 without BatchNorm, torchvision side: vgg16(weights=None), eval, 10 classes.
Held-out family (set 50, see NOTES-set50-h143.md). No BatchNorm, so no calibration.

Planted bug (PADIFF_BUG): bgr -- see vgg16_truth.json.
"""
import os
import types

import numpy as np
import torch
from _tv import torchvision  # torchvision from <repo>/.vision-site, see _tv.py


def _forward_bgr(self, x):
    # the first conv reads the image's channels in reverse order (BGR instead of RGB)
    return self._conv_forward(torch.flip(x, dims=(1,)), self.weight, self.bias)


def model():
    torch.manual_seed(0)
    m = torchvision.models.vgg16(num_classes=10, weights=None)
    m.eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "bgr":  # features.0, the first 3x3 conv (3 -> 64), sees BGR input
        conv = m.features[0]
        conv.forward = types.MethodType(_forward_bgr, conv)
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    return (output**2).mean()
