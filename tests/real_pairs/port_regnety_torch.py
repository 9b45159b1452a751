"""Hand-written port, torch side: a tiny RegNetY-style CNN (written by "person B", torchvision style).

The same network as port_regnety_paddle.py, re-implemented by hand after torchvision's
models/regnet.py: input `images` [2, 3, 32, 32] (positional), output logits [2, 10].
stem conv3x3/2 16 - two stages (width 24 then 48, depth 2 each, group width 8, first block
stride 2) of Y blocks - average pool - fc. SE width = round(0.25 * block input width).

Torch idioms on this side:
- `Conv2dNormActivation` is an nn.Sequential: `0` conv (no bias), `1` BatchNorm2d, `2` ReLU (only
  when an activation is asked for).
- root `RegNet` registers `stem`, `trunk_output` (nn.Sequential with `block1`, `block2`, each an
  `AnyStage` nn.Sequential whose blocks are named torchvision-style "block1-0", "block1-1", ...),
  `avgpool` (nn.AdaptiveAvgPool2d(1)) and `fc` (nn.Linear(48, 10)).
- `ResBottleneckBlock` registers `proj` (Conv2dNormActivation without activation; only when the
  shape changes) BEFORE `f`, and calls it first: x = proj(x) + f(x); then `activation`
  (nn.ReLU(inplace=True), as torchvision).
- `BottleneckTransform` is an nn.Sequential(OrderedDict(a, b, se, c)): `a` 1x1
  conv-BN-ReLU, `b` 3x3 group conv (stride here)-BN-ReLU, `se` SqueezeExcitation, `c` 1x1
  conv-BN without activation.
- `SqueezeExcitation` (torchvision's): `avgpool`, `fc1`, `fc2` (Conv2d 1x1 with bias),
  `activation` (nn.ReLU), `scale_activation` (nn.Sigmoid), all modules.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_stride_on_1x1 -> the stride of a down-sampling block is put on the 1x1 conv `a`
                         (ResNet v1 / Caffe style) instead of the 3x3 group conv `b`
  torch_c_has_relu    -> `c` is built as Conv2dNormActivation(...) without passing
                         activation_layer=None, so it gets the default ReLU (`c.2`)
"""
import os
from collections import OrderedDict

import numpy as np
import torch
from torch import nn

STEM_WIDTH, NUM_CLASSES, GROUP_WIDTH, SE_RATIO = 16, 10, 8, 0.25
WIDTHS, DEPTHS = (24, 48), (2, 2)
BATCH = 2
OWN_BUGS = {"torch_stride_on_1x1", "torch_c_has_relu"}
OTHER_BUGS = {"paddle_proj_bn_eps", "paddle_se_silu"}


class Conv2dNormActivation(nn.Sequential):
    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, groups=1, activation_layer=nn.ReLU):
        layers = [
            nn.Conv2d(in_channels, out_channels, kernel_size, stride, (kernel_size - 1) // 2, groups=groups, bias=False),
            nn.BatchNorm2d(out_channels),
        ]
        if activation_layer is not None:
            layers.append(activation_layer())
        super().__init__(*layers)


class SqueezeExcitation(nn.Module):
    def __init__(self, input_channels, squeeze_channels):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = nn.ReLU()
        self.scale_activation = nn.Sigmoid()

    def forward(self, x):
        scale = self.avgpool(x)
        scale = self.fc1(scale)
        scale = self.activation(scale)
        scale = self.fc2(scale)
        scale = self.scale_activation(scale)
        return scale * x


class BottleneckTransform(nn.Sequential):
    def __init__(self, width_in, width_out, stride, stride_on_1x1=False, c_has_relu=False):
        w_b = width_out  # bottleneck multiplier 1
        g = w_b // GROUP_WIDTH
        width_se_out = round(SE_RATIO * width_in)
        s_a, s_b = (stride, 1) if stride_on_1x1 else (1, stride)
        layers = OrderedDict()
        layers["a"] = Conv2dNormActivation(width_in, w_b, kernel_size=1, stride=s_a)
        layers["b"] = Conv2dNormActivation(w_b, w_b, kernel_size=3, stride=s_b, groups=g)
        layers["se"] = SqueezeExcitation(w_b, width_se_out)
        if c_has_relu:
            layers["c"] = Conv2dNormActivation(w_b, width_out, kernel_size=1)
        else:
            layers["c"] = Conv2dNormActivation(w_b, width_out, kernel_size=1, activation_layer=None)
        super().__init__(layers)


class ResBottleneckBlock(nn.Module):
    def __init__(self, width_in, width_out, stride, **bugs):
        super().__init__()
        self.proj = None
        if (width_in != width_out) or (stride != 1):
            self.proj = Conv2dNormActivation(width_in, width_out, kernel_size=1, stride=stride, activation_layer=None)
        self.f = BottleneckTransform(width_in, width_out, stride, **bugs)
        self.activation = nn.ReLU(inplace=True)

    def forward(self, x):
        if self.proj is not None:
            x = self.proj(x) + self.f(x)
        else:
            x = x + self.f(x)
        return self.activation(x)


class AnyStage(nn.Sequential):
    def __init__(self, width_in, width_out, depth, stage_index, **bugs):
        super().__init__()
        for i in range(depth):
            block = ResBottleneckBlock(width_in if i == 0 else width_out, width_out, 2 if i == 0 else 1, **bugs)
            self.add_module(f"block{stage_index}-{i}", block)


class RegNet(nn.Module):
    def __init__(self, **bugs):
        super().__init__()
        self.stem = Conv2dNormActivation(3, STEM_WIDTH, kernel_size=3, stride=2)
        current = STEM_WIDTH
        blocks = []
        for i, (w, d) in enumerate(zip(WIDTHS, DEPTHS)):
            blocks.append((f"block{i + 1}", AnyStage(current, w, d, i + 1, **bugs)))
            current = w
        self.trunk_output = nn.Sequential(OrderedDict(blocks))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(current, NUM_CLASSES)

    def forward(self, images):
        x = self.stem(images)
        x = self.trunk_output(x)
        x = self.avgpool(x)
        x = x.flatten(start_dim=1)
        return self.fc(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_regnety torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = RegNet(stride_on_1x1=bug == "torch_stride_on_1x1", c_has_relu=bug == "torch_c_has_relu")
    return m.eval()


def _images():
    rng = np.random.default_rng(43)
    return rng.standard_normal((BATCH, 3, 32, 32)).astype("float32")


def inputs():
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
