"""VGG-16 without BatchNorm, paddle.vision side: vgg16(batch_norm=False), random init (no
download), eval, 10 classes. Held-out family (set 50, see NOTES-set50-h143.md).

No BatchNorm, so no calibration (_calib.py would have nothing to set): the convs carry biases
(zero at init), eval only switches the classifier's two Dropouts off.

PADIFF_BUG=paddle_kernel_hw plants this side's bug: the 3x3 conv features.12 (the second
256-channel conv) uses its kernel with height and width swapped (weight.transpose([0, 1, 3, 2])),
as when a kernel is ported from an [kw, kh, ...] layout without fixing the axes.
"""
import os
import types

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle.vision.models import vgg16


def _forward_kernel_hw(self, x):
    w = paddle.transpose(self.weight, [0, 1, 3, 2])
    return F.conv2d(x, w, self.bias, stride=self._stride, padding=self._updated_padding,
                    dilation=self._dilation, groups=self._groups)


def model():
    paddle.seed(0)
    m = vgg16(batch_norm=False, num_classes=10)
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_kernel_hw":
        conv = m.features[12]
        object.__setattr__(conv, "forward", types.MethodType(_forward_kernel_hw, conv))
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    return (output**2).mean()
