"""Hand-written port, paddle side: a tiny DBNet text detector in PaddleOCR style (written by "person A").

Input: one image batch [2, 3, 64, 64] (positional, NCHW, numpy rng seed 31, standard normal).
Output: the three DB maps concatenated on the channel axis, [2, 3, 64, 64]:
channel 0 = probability (shrink) map P, channel 1 = threshold map T, channel 2 = approximate
binary map B = 1 / (1 + exp(-k (P - T))) with k = 50.

Architecture (shared with the torch side):
- backbone: stem conv3x3 s2 (3 -> 8) + BN + ReLU (32x32), then three stages, each conv3x3 s2 +
  BN + ReLU followed by conv3x3 s1 + BN + ReLU: C2 [8, 16x16], C3 [16, 8x8], C4 [32, 4x4];
  every conv without bias, BN eps 1e-5.
- neck (DBFPN): lateral 1x1 convs (no bias) to 16 channels; top-down in3 = lat3 + up2(in4),
  in2 = lat2 + up2(in3) (nearest); smooth 3x3 convs (no bias) 16 -> 4 on in4 / in3 / in2;
  p4 up x4, p3 up x2 (nearest); fuse = concat([p4, p3, p2]) -> [12, 16x16].
- head (DB head): two identical branches (probability "binarize", threshold "thresh"):
  conv3x3 (12 -> 3, no bias) + BN + ReLU, ConvTranspose 2x2 s2 (3 -> 3) + BN + ReLU,
  ConvTranspose 2x2 s2 (3 -> 1), sigmoid -> [1, 64x64]; then the step function.

Paddle idioms on this side (PaddleOCR det_mobilenet / db_fpn / det_db_head style):
- `ConvBNLayer`: `conv` nn.Conv2D (bias_attr=False) and `bn` = the legacy nn.BatchNorm with
  act="relu", i.e. BN and ReLU FUSED in one layer (no separate activation layer).
- root `DBNet`: `backbone` (`MiniBackbone`: `conv1` ConvBNLayer, then `stages` = LayerList of
  nn.Sequential of two ConvBNLayer each; the stage outputs are collected in a list), `neck`
  (`DBFPN`), `head` (`DBHead`).
- `DBFPN` registers `in4_conv`, `in3_conv`, `in2_conv` (high level first) and `p4_conv`,
  `p3_conv`, `p2_conv`; upsampling is F.upsample(mode="nearest", align_mode=1) inline.
- `DBHead`: `binarize`, `thresh` (two `Head` layers: `conv1`, `conv_bn1`, `conv2`, `conv_bn2`,
  `conv3`; conv_bn* = nn.BatchNorm(act="relu"); conv2 / conv3 nn.Conv2DTranspose; F.sigmoid
  inline), and the step function as a plain method `step_function` (no layer), k = 50.
- model() gives every BN trained-looking affine weights and running statistics (seeded).

The torch side (port_dbnet_torch.py) was written independently (DBNet.pytorch style):
nn.Sequential stages of Conv2d / BatchNorm2d / ReLU modules, ModuleLists `lateral_convs` /
`smooth_convs` (low level first), and the two head branches as nn.Sequential with an nn.Sigmoid.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_head_bn_eps        -> `Head` builds its first BN (conv_bn1) with epsilon=1e-3 instead of
                               1e-5 (both branches)
  paddle_topdown_bilinear   -> DBFPN's top-down path upsamples with mode="bilinear" instead of
                               "nearest" (the final x4 / x2 upsampling of p4 / p3 stays nearest)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

K = 50.0
INNER, BATCH = 16, 2
OWN_BUGS = {"paddle_head_bn_eps", "paddle_topdown_bilinear"}
OTHER_BUGS = {"torch_thresh_no_sigmoid", "torch_step_swapped"}


class ConvBNLayer(nn.Layer):
    def __init__(self, in_c, out_c, stride):
        super().__init__()
        self.conv = nn.Conv2D(in_c, out_c, 3, stride=stride, padding=1, bias_attr=False)
        self.bn = nn.BatchNorm(out_c, act="relu", epsilon=1e-5)

    def forward(self, x):
        return self.bn(self.conv(x))


class MiniBackbone(nn.Layer):
    def __init__(self, channels=(8, 16, 32)):
        super().__init__()
        self.conv1 = ConvBNLayer(3, 8, 2)
        stages, in_c = [], 8
        for c in channels:
            stages.append(nn.Sequential(ConvBNLayer(in_c, c, 2), ConvBNLayer(c, c, 1)))
            in_c = c
        self.stages = nn.LayerList(stages)
        self.out_channels = list(channels)

    def forward(self, x):
        x = self.conv1(x)
        outs = []
        for stage in self.stages:
            x = stage(x)
            outs.append(x)
        return outs


class DBFPN(nn.Layer):
    def __init__(self, in_channels, out_channels, topdown_mode="nearest"):
        super().__init__()
        self.topdown_mode = topdown_mode
        self.in4_conv = nn.Conv2D(in_channels[2], out_channels, 1, bias_attr=False)
        self.in3_conv = nn.Conv2D(in_channels[1], out_channels, 1, bias_attr=False)
        self.in2_conv = nn.Conv2D(in_channels[0], out_channels, 1, bias_attr=False)
        self.p4_conv = nn.Conv2D(out_channels, out_channels // 4, 3, padding=1, bias_attr=False)
        self.p3_conv = nn.Conv2D(out_channels, out_channels // 4, 3, padding=1, bias_attr=False)
        self.p2_conv = nn.Conv2D(out_channels, out_channels // 4, 3, padding=1, bias_attr=False)

    def _up(self, x, scale):
        if self.topdown_mode == "nearest":
            return F.upsample(x, scale_factor=scale, mode="nearest", align_mode=1)
        return F.upsample(x, scale_factor=scale, mode="bilinear", align_corners=False)

    def forward(self, x):
        c2, c3, c4 = x
        in4 = self.in4_conv(c4)
        in3 = self.in3_conv(c3)
        in2 = self.in2_conv(c2)
        out3 = in3 + self._up(in4, 2)
        out2 = in2 + self._up(out3, 2)
        p4 = self.p4_conv(in4)
        p3 = self.p3_conv(out3)
        p2 = self.p2_conv(out2)
        p4 = F.upsample(p4, scale_factor=4, mode="nearest", align_mode=1)
        p3 = F.upsample(p3, scale_factor=2, mode="nearest", align_mode=1)
        return paddle.concat([p4, p3, p2], axis=1)


class Head(nn.Layer):
    def __init__(self, in_channels, bn1_eps=1e-5):
        super().__init__()
        mid = in_channels // 4
        self.conv1 = nn.Conv2D(in_channels, mid, 3, padding=1, bias_attr=False)
        self.conv_bn1 = nn.BatchNorm(mid, act="relu", epsilon=bn1_eps)
        self.conv2 = nn.Conv2DTranspose(mid, mid, 2, stride=2)
        self.conv_bn2 = nn.BatchNorm(mid, act="relu", epsilon=1e-5)
        self.conv3 = nn.Conv2DTranspose(mid, 1, 2, stride=2)

    def forward(self, x):
        x = self.conv_bn1(self.conv1(x))
        x = self.conv_bn2(self.conv2(x))
        return F.sigmoid(self.conv3(x))


class DBHead(nn.Layer):
    def __init__(self, in_channels, k=K, bn1_eps=1e-5):
        super().__init__()
        self.k = k
        self.binarize = Head(in_channels, bn1_eps)
        self.thresh = Head(in_channels, bn1_eps)

    def step_function(self, x, y):
        return paddle.reciprocal(1 + paddle.exp(-self.k * (x - y)))

    def forward(self, x):
        shrink_maps = self.binarize(x)
        threshold_maps = self.thresh(x)
        binary_maps = self.step_function(shrink_maps, threshold_maps)
        return paddle.concat([shrink_maps, threshold_maps, binary_maps], axis=1)


class DBNet(nn.Layer):
    def __init__(self, bn1_eps=1e-5, topdown_mode="nearest"):
        super().__init__()
        self.backbone = MiniBackbone()
        self.neck = DBFPN(self.backbone.out_channels, INNER, topdown_mode)
        self.head = DBHead(3 * (INNER // 4), bn1_eps=bn1_eps)

    def forward(self, x):
        return self.head(self.neck(self.backbone(x)))


def _trained_look(m):
    rng = np.random.default_rng(41)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.1, 0.3, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, c).astype("float32"))
        if isinstance(layer, nn.Conv2DTranspose):
            layer.bias.set_value(rng.normal(0.0, 0.2, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_dbnet paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = DBNet(bn1_eps=1e-3 if bug == "paddle_head_bn_eps" else 1e-5,
              topdown_mode="bilinear" if bug == "paddle_topdown_bilinear" else "nearest")
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(31)
    return rng.standard_normal((BATCH, 3, 64, 64)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # DB maps [2, 3, 64, 64]
    return (output**2).mean()
