"""ShuffleNetV2 x0.5, torchvision side: weights=None, BN-calibrated (see _calib.py), eval, 10 classes.

Planted bugs (PADIFF_BUG): shuffle_groups, bn_eps -- see shufflenet_v2_x0_5_truth.json.
"""
import os
import types

import numpy as np
import torch
from _calib import calibrate_torch
from _tv import torchvision  # torchvision from <repo>/.vision-site, see _tv.py
from torchvision.models.shufflenetv2 import channel_shuffle


def _forward_shuffle4(self, x):
    # torchvision's InvertedResidual.forward (stride 1) with channel_shuffle(out, 4), not 2
    x1, x2 = x.chunk(2, dim=1)
    out = torch.cat((x1, self.branch2(x2)), dim=1)
    return channel_shuffle(out, 4)


def model():
    torch.manual_seed(0)
    m = torchvision.models.shufflenet_v2_x0_5(num_classes=10, weights=None)
    calibrate_torch(m)  # BN running stats := calibration-batch stats; leaves eval mode
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "shuffle_groups":  # block stage3.2 shuffles its channels in 4 groups instead of 2
        blk = m.stage3[2]
        blk.forward = types.MethodType(_forward_shuffle4, blk)
    elif bug == "bn_eps":  # BatchNorm2d(c, 0.9): paddle's (momentum, epsilon) order -> eps=0.9
        m.stage4[0].branch1[1].eps = 0.9
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    return (output**2).mean()
