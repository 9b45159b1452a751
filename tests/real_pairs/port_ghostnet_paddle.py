"""Hand-written port, paddle side: a tiny GhostNet classifier (written by "person A", PaddleClas style).

Input: one image batch `x` [2, 3, 32, 32] (positional, NCHW, numpy rng seed 41, standard
normal). Output: logits [2, 10].

The network (Han et al., GhostNet), identical on both sides:
  stem        conv 3x3 stride 2 (3 -> 8, no bias) -> BN -> relu                   [2, 8, 16, 16]
  bottlenecks (kernel, mid, out, SE, stride):
              (3, 16,  8, no,  1)   identity shortcut                           [2, 8, 16, 16]
              (3, 24, 12, no,  2)   shortcut conv                               [2, 12, 8, 8]
              (5, 27, 12, yes, 1)   identity shortcut, SE 27 -> 8 -> 27         [2, 12, 8, 8]
              (5, 36, 21, yes, 2)   shortcut conv,     SE 36 -> 12 -> 36        [2, 21, 4, 4]
  last        conv 1x1 (21 -> 48, no bias) -> BN -> relu; global average pool
  head        48 -> 64 (bias) -> relu -> 64 -> 10
ghost module(inp, oup, relu): init = ceil(oup / 2); x1 = primary(x) = conv 1x1 (inp -> init) -> BN
  [-> relu]; x2 = cheap(x1) = depthwise 3x3 (init -> init) -> BN [-> relu];
  out = concat(x1, x2)[:, :oup] (the slice drops a channel for the odd widths 27 and 21).
bottleneck: ghost1 (relu) -> [depthwise k x k stride 2 -> BN, only when stride 2] -> [SE] ->
  ghost2 (no relu), plus the shortcut: identity, or depthwise k x k stride 2 -> BN -> conv 1x1 ->
  BN. SE: global average pool -> reduce (bias) -> relu -> expand (bias) -> hard sigmoid
  (relu6(x + 3) / 6) -> scale the input channels.
BN eps 1e-5 everywhere.

Paddle idioms on this side (PaddleClas GhostNet style):
- root `GhostNet`: `conv1` (ConvBNLayer), `blocks` (LayerList of `GhostBottleneck`), `conv_last`
  (ConvBNLayer), `pool2d_gap` (AdaptiveAvgPool2D(1)), then the head as two LINEAR layers on the
  pooled vector: `fc_0` Linear(48, 64) (relu inline) and `fc_1` Linear(64, 10).
- `ConvBNLayer`: `_conv` (Conv2D, bias_attr=False) and `_batch_norm` (BatchNorm2D); the
  activation is an `act` string applied inline (F.relu) or None.
- `GhostModule`: `primary_conv`, `cheap_operation` (ConvBNLayers, act "relu" or None); concat and
  slice inline.
- `GhostBottleneck`: `ghost_module_1`, `depthwise_conv` (ConvBNLayer, stride 2 only), `se_block`,
  `ghost_module_2`, and the shortcut as two ConvBNLayers `shortcut_depthwise`, `shortcut_conv`
  directly on the bottleneck (stride-2 blocks only).
- `SEBlock`: `pool2d_gap` (AdaptiveAvgPool2D(1)), then LINEAR `squeeze` / `excitation` layers on
  the pooled [B, C] vector (relu inline) and F.hardsigmoid inline (slope 1/6, offset 0.5).
- model() gives every BN trained-looking affine weights / running statistics and every bias
  trained-looking values (seeded), so that nothing is an identity.

The torch side (port_ghostnet_torch.py) was written independently (Huawei / timm style): a stem
of three modules, nn.Sequential stages, GhostModules built of nn.Sequential(conv, BN, act), a
`shortcut` nn.Sequential, an SE with 1x1 CONVOLUTIONS and an nn.Hardsigmoid module, and a 1x1
`conv_head` convolution before the classifier.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_se_hsig_slope -> SEBlock calls F.hardsigmoid(x, slope=0.2, offset=0.5) (the old fluid
                          hard_sigmoid default) instead of slope 1/6
  paddle_se_before_dw  -> GhostBottleneck applies the SE block BEFORE the stride-2 depthwise conv
                          instead of after it (only the last bottleneck has both)
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

STEM, LAST, HEAD, CLASSES = 8, 48, 64, 10
# kernel, mid, out, se reduced width (0 = no SE), stride
CFG = [(3, 16, 8, 0, 1), (3, 24, 12, 0, 2), (5, 27, 12, 8, 1), (5, 36, 21, 12, 2)]
BATCH, SIZE = 2, 32
OWN_BUGS = {"paddle_se_hsig_slope", "paddle_se_before_dw"}
OTHER_BUGS = {"torch_bn_eps_tf", "torch_cheap_relu_always"}


class ConvBNLayer(nn.Layer):
    def __init__(self, in_c, out_c, kernel, stride=1, groups=1, act=None):
        super().__init__()
        self.act = act
        self._conv = nn.Conv2D(in_c, out_c, kernel, stride=stride, padding=(kernel - 1) // 2, groups=groups,
                               bias_attr=False)
        self._batch_norm = nn.BatchNorm2D(out_c)

    def forward(self, x):
        x = self._batch_norm(self._conv(x))
        if self.act == "relu":
            x = F.relu(x)
        return x


class SEBlock(nn.Layer):
    def __init__(self, channels, reduced, hsig_slope=1.0 / 6):
        super().__init__()
        self.hsig_slope = hsig_slope
        self.pool2d_gap = nn.AdaptiveAvgPool2D(1)
        self.squeeze = nn.Linear(channels, reduced)
        self.excitation = nn.Linear(reduced, channels)

    def forward(self, x):
        s = paddle.squeeze(self.pool2d_gap(x), axis=[2, 3])
        s = self.excitation(F.relu(self.squeeze(s)))
        s = F.hardsigmoid(s, slope=self.hsig_slope, offset=0.5)
        return x * s.unsqueeze([2, 3])


class GhostModule(nn.Layer):
    def __init__(self, inp, oup, relu=True, dw_size=3, ratio=2):
        super().__init__()
        self.oup = oup
        init_channels = math.ceil(oup / ratio)
        new_channels = init_channels * (ratio - 1)
        act = "relu" if relu else None
        self.primary_conv = ConvBNLayer(inp, init_channels, 1, act=act)
        self.cheap_operation = ConvBNLayer(init_channels, new_channels, dw_size, groups=init_channels, act=act)

    def forward(self, x):
        x1 = self.primary_conv(x)
        x2 = self.cheap_operation(x1)
        return paddle.concat([x1, x2], axis=1)[:, : self.oup]


class GhostBottleneck(nn.Layer):
    def __init__(self, in_c, mid_c, out_c, kernel, stride, se_reduced, hsig_slope=1.0 / 6, se_first=False):
        super().__init__()
        self.stride, self.se_first = stride, se_first
        self.identity = in_c == out_c and stride == 1
        self.ghost_module_1 = GhostModule(in_c, mid_c, relu=True)
        if stride == 2:
            self.depthwise_conv = ConvBNLayer(mid_c, mid_c, kernel, stride=stride, groups=mid_c)
        self.se_block = SEBlock(mid_c, se_reduced, hsig_slope) if se_reduced else None
        self.ghost_module_2 = GhostModule(mid_c, out_c, relu=False)
        if not self.identity:
            self.shortcut_depthwise = ConvBNLayer(in_c, in_c, kernel, stride=stride, groups=in_c)
            self.shortcut_conv = ConvBNLayer(in_c, out_c, 1)

    def forward(self, inputs):
        x = self.ghost_module_1(inputs)
        if self.se_first and self.se_block is not None:
            x = self.se_block(x)
        if self.stride == 2:
            x = self.depthwise_conv(x)
        if not self.se_first and self.se_block is not None:
            x = self.se_block(x)
        x = self.ghost_module_2(x)
        if self.identity:
            shortcut = inputs
        else:
            shortcut = self.shortcut_conv(self.shortcut_depthwise(inputs))
        return paddle.add(x, shortcut)


class GhostNet(nn.Layer):
    def __init__(self, hsig_slope=1.0 / 6, se_first=False):
        super().__init__()
        self.conv1 = ConvBNLayer(3, STEM, 3, stride=2, act="relu")
        blocks, in_c = [], STEM
        for kernel, mid_c, out_c, se_reduced, stride in CFG:
            blocks.append(GhostBottleneck(in_c, mid_c, out_c, kernel, stride, se_reduced, hsig_slope, se_first))
            in_c = out_c
        self.blocks = nn.LayerList(blocks)
        self.conv_last = ConvBNLayer(in_c, LAST, 1, act="relu")
        self.pool2d_gap = nn.AdaptiveAvgPool2D(1)
        self.fc_0 = nn.Linear(LAST, HEAD)
        self.fc_1 = nn.Linear(HEAD, CLASSES)

    def forward(self, x):
        x = self.conv1(x)
        for block in self.blocks:
            x = block(x)
        x = self.pool2d_gap(self.conv_last(x))
        x = paddle.reshape(x, [x.shape[0], -1])
        x = F.relu(self.fc_0(x))
        return self.fc_1(x)  # [B, 10]


def _trained_look(m):
    rng = np.random.default_rng(29)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, c).astype("float32"))
        elif isinstance(layer, nn.Linear):
            layer.bias.set_value(rng.normal(0.0, 0.3, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_ghostnet paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = GhostNet(hsig_slope=0.2 if bug == "paddle_se_hsig_slope" else 1.0 / 6, se_first=bug == "paddle_se_before_dw")
    _trained_look(m)
    m.eval()
    return m


def _images():
    rng = np.random.default_rng(41)
    return rng.standard_normal((BATCH, 3, SIZE, SIZE)).astype("float32")


def inputs():
    return (paddle.to_tensor(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
