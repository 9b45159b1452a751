"""ShuffleNetV2 x1.0, torchvision side: weights=None, BN-calibrated (see _calib.py), eval, 10 classes.
Held-out family (set 50, see NOTES-set50-h143.md).

Planted bug (PADIFF_BUG): bn_eps_1e3 -- see shufflenet_v2_x1_0_truth.json.
"""
import os

import numpy as np
import torch
from _calib import calibrate_torch
from _tv import torchvision  # torchvision from <repo>/.vision-site, see _tv.py


def model():
    torch.manual_seed(0)
    m = torchvision.models.shufflenet_v2_x1_0(num_classes=10, weights=None)
    calibrate_torch(m)  # BN running stats := calibration-batch stats; leaves eval mode
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "bn_eps_1e3":  # a small bug: the BatchNorm after the first 1x1 conv of stage4.1 with eps 1e-3, not 1e-5
        m.stage4[1].branch2[1].eps = 1e-3
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    return (output**2).mean()
