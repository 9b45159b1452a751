"""DenseNet-169, torchvision side: weights=None, BN-calibrated (see _calib.py), eval, 10 classes.
Held-out family (set 50, see NOTES-set50-h143.md).

Planted bug (PADIFF_BUG): cat_order -- see densenet169_truth.json.
"""
import os
import types

import numpy as np
import torch
from _calib import calibrate_torch
from _tv import torchvision  # torchvision from <repo>/.vision-site, see _tv.py


def _bn_function_newest_first(self, inputs):
    # torchvision's _DenseLayer.bn_function with the earlier feature maps concatenated newest first
    concated_features = torch.cat(inputs[::-1], 1)
    return self.conv1(self.relu1(self.norm1(concated_features)))


def model():
    torch.manual_seed(0)
    m = torchvision.models.densenet169(num_classes=10, weights=None)
    calibrate_torch(m)  # BN running stats := calibration-batch stats; leaves eval mode
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "cat_order":  # denseblock3.denselayer7 concatenates its 7 inputs in reverse order
        layer = m.features.denseblock3.denselayer7
        layer.bn_function = types.MethodType(_bn_function_newest_first, layer)
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    return (output**2).mean()
