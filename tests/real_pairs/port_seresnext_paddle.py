"""Hand-written port, paddle side: a tiny SE-ResNeXt image classifier (written by "person A").

Sizes: input [2, 3, 32, 32] (NCHW), 10 classes, eval mode (BatchNorm uses its running
statistics, eps 1e-5 everywhere). Stem: 3x3 conv 3 -> 32 + BN + ReLU. Three bottleneck blocks,
cardinality 8, SE reduction 4:
  bb_0: 32 -> width 32 -> 32, stride 1, identity shortcut
  bb_1: 32 -> width 64 -> 64, stride 2 (on the grouped 3x3), projection shortcut 1x1 stride 2 + BN
  bb_2: 64 -> width 64 -> 64, stride 1, identity shortcut
then global average pool, flatten, fc 64 -> 10.

PaddleClas idioms on this side:
- every conv is a `ConvBNLayer`: `_conv` (nn.Conv2D, no bias) + `_batch_norm`, the fluid-style
  `paddle.nn.BatchNorm(num_channels, act=...)` with the ReLU FUSED into the BN call
  (act="relu" on conv0 / conv1 / the stem, act=None on conv2 and on the shortcut);
- the Squeeze-and-Excitation `SELayer` works on the POOLED VECTOR with Linears:
  `pool2d_gap` (AdaptiveAvgPool2D(1)), `squeeze` Linear(C, C/4) + F.relu, `excitation`
  Linear(C/4, C) + F.sigmoid, then the feature map is scaled by the [N, C, 1, 1] gate;
- `BottleneckBlock` registers `short` (when there is one) and `scale` (the SE) BEFORE conv0 /
  conv1 / conv2, which are called first; the residual add is paddle.add + F.relu;
- the blocks are added with add_sublayer("bb_%d") (no LayerList); the root registers `out`
  (the fc) before `pool2d_avg`.

The torch side (port_seresnext_torch.py) was written independently: separate Conv2d /
BatchNorm2d modules, nn.Sequential stem and downsample, F.relu, an SE with 1x1 Conv2d fc1 / fc2
on the [N, C, 1, 1] map, and an inline mean for the final pool.

PADIFF_BUG=paddle_conv2_bn_relu plants this side's bug: the bottleneck's last ConvBNLayer
(conv2, the 1x1 expansion) is built with act="relu" (copied from conv0 / conv1) instead of
act=None, so the residual branch is rectified before the SE and the residual add. The torch
side's bug names are accepted and ignored; any other name raises ValueError.
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

NUM_CLASSES = 10
CARDINALITY = 8
REDUCTION = 4
BATCH, IMG = 2, 32
# (in_channels, width, out_channels, stride)
BLOCKS = [(32, 32, 32, 1), (32, 64, 64, 2), (64, 64, 64, 1)]
OWN_BUGS = {"paddle_conv2_bn_relu"}
OTHER_BUGS = {"torch_stride_on_1x1", "torch_se_after_add"}


class ConvBNLayer(nn.Layer):
    def __init__(self, num_channels, num_filters, filter_size, stride=1, groups=1, act=None):
        super().__init__()
        self._conv = nn.Conv2D(
            num_channels,
            num_filters,
            filter_size,
            stride=stride,
            padding=(filter_size - 1) // 2,
            groups=groups,
            bias_attr=False,
        )
        self._batch_norm = nn.BatchNorm(num_filters, act=act, epsilon=1e-5)

    def forward(self, x):
        return self._batch_norm(self._conv(x))


class SELayer(nn.Layer):
    def __init__(self, num_channels, reduction_ratio):
        super().__init__()
        mid = num_channels // reduction_ratio
        self.pool2d_gap = nn.AdaptiveAvgPool2D(1)
        self.squeeze = nn.Linear(num_channels, mid)
        self.excitation = nn.Linear(mid, num_channels)

    def forward(self, x):
        pool = self.pool2d_gap(x)
        pool = paddle.squeeze(pool, axis=[2, 3])
        s = F.relu(self.squeeze(pool))
        s = F.sigmoid(self.excitation(s))
        s = paddle.unsqueeze(s, axis=[2, 3])
        return x * s


class BottleneckBlock(nn.Layer):
    def __init__(self, num_channels, width, num_filters, stride, conv2_act=None):
        super().__init__()
        self.shortcut = stride == 1 and num_channels == num_filters
        if not self.shortcut:
            self.short = ConvBNLayer(num_channels, num_filters, 1, stride=stride)
        self.scale = SELayer(num_filters, REDUCTION)
        self.conv0 = ConvBNLayer(num_channels, width, 1, act="relu")
        self.conv1 = ConvBNLayer(width, width, 3, stride=stride, groups=CARDINALITY, act="relu")
        self.conv2 = ConvBNLayer(width, num_filters, 1, act=conv2_act)

    def forward(self, inputs):
        y = self.conv0(inputs)
        y = self.conv1(y)
        y = self.conv2(y)
        y = self.scale(y)
        short = inputs if self.shortcut else self.short(inputs)
        return F.relu(paddle.add(x=short, y=y))


class SEResNeXt(nn.Layer):
    def __init__(self, conv2_act=None):
        super().__init__()
        self.conv = ConvBNLayer(3, 32, 3, act="relu")
        self.out = nn.Linear(BLOCKS[-1][2], NUM_CLASSES)
        self.block_list = []
        for i, (cin, width, cout, stride) in enumerate(BLOCKS):
            blk = self.add_sublayer(f"bb_{i}", BottleneckBlock(cin, width, cout, stride, conv2_act))
            self.block_list.append(blk)
        self.pool2d_avg = nn.AdaptiveAvgPool2D(1)

    def forward(self, inputs):
        y = self.conv(inputs)
        for blk in self.block_list:
            y = blk(y)
        y = self.pool2d_avg(y)
        y = paddle.flatten(y, start_axis=1)
        return self.out(y)


def _randomize_bn_stats(m):
    """Non-trivial BN affine parameters and running statistics (a 'trained' model)."""
    rng = np.random.default_rng(3)
    for layer in m.sublayers():
        if isinstance(layer, nn.BatchNorm):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.3, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, c).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_seresnext paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = SEResNeXt(conv2_act="relu" if bug == "paddle_conv2_bn_relu" else None)
    _randomize_bn_stats(m)
    m.eval()
    return m


def _images():
    rng = np.random.default_rng(5)
    return rng.standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
