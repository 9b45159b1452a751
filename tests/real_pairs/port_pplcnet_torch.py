"""Hand-written port, torch side: a tiny PP-LCNet classifier, timm style (written by "person B").

The same math as port_pplcnet_paddle.py, re-implemented by hand the way timm builds `lcnet_*`
(MobileNetV3 class, 'dsa' blocks): input x [2, 3, 32, 32] (positional), output logits [2, 10].

  conv_stem 3x3 s2 3 -> 8, bn1 (BatchNormAct2d: BN eps 1e-5 + hardswish)
  blocks.0  [dsa k3 s1 8 -> 16]
  blocks.1  [dsa k3 s2 16 -> 24, dsa k3 s1 24 -> 24]
  blocks.2  [dsa k5 s2 24 -> 32]
  blocks.3  [dsa k5 s1 32 -> 32, se 0.25]
  blocks.4  [dsa k5 s2 32 -> 48, se 0.25]
  global_pool (SelectAdaptivePool2d 'avg', no flatten) -> conv_head 1x1 48 -> 64 (no bias) ->
  norm_head (Identity) -> act2 (Hardswish) -> flatten -> F.dropout (p 0) -> classifier
  Linear(64, 10)

Torch idioms on this side:
- `BatchNormAct2d` is an nn.BatchNorm2d subclass that also holds `drop` (Identity) and `act`
  (nn.Hardswish): the BN and its activation are ONE module call (F.batch_norm inline, then the
  children). It keeps the inherited `weight` / `bias` / `running_mean` / `running_var` names.
- `blocks` is an nn.Sequential of per-stage nn.Sequentials (names `blocks.S.I`).
- `DepthwiseSeparableConv` registers conv_dw, bn1, aa (Identity), se (SqueezeExcite or
  Identity), conv_pw, bn2, drop_path (Identity); a 'dsa' block has an activation after the
  pointwise BN and no skip (noskip).
- `SqueezeExcite` registers conv_reduce, act1 (nn.ReLU), conv_expand, gate (nn.Hardsigmoid);
  the squeeze is x.mean((2, 3), keepdim=True) inline (no pooling module).
- `SelectAdaptivePool2d` holds `pool` (nn.AdaptiveAvgPool2d(1)) and `flatten` (Identity).
- every conv is created with timm's symmetric padding ((stride - 1) + (k - 1)) // 2, the same as
  PaddleClas's (k - 1) // 2 for these kernels / strides.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_dsa_skip      -> the block builder forgets that 'dsa' blocks are noskip, so every
                         stride-1 block with in == out channels (blocks.1.1, blocks.3.0) adds
                         its input back
  torch_head_pool_max -> the head's SelectAdaptivePool2d is built with pool_type='max'
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

BATCH, IMG, NUM_CLASSES, NUM_FEATURES = 2, 32, 10, 64
OWN_BUGS = {"torch_dsa_skip", "torch_head_pool_max"}
OTHER_BUGS = {"paddle_se_hardsigmoid_slope", "paddle_bn_eps"}

STEM_SIZE = 8
# per stage: (kernel, stride, out_chs, se_ratio) for each block
ARCH_DEF = [
    [(3, 1, 16, 0.0)],
    [(3, 2, 24, 0.0), (3, 1, 24, 0.0)],
    [(5, 2, 32, 0.0)],
    [(5, 1, 32, 0.25)],
    [(5, 2, 48, 0.25)],
]


def make_divisible(v, divisor=8, min_value=None, round_limit=0.9):
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < round_limit * v:
        new_v += divisor
    return new_v


def get_padding(kernel_size, stride=1, dilation=1):
    return ((stride - 1) + dilation * (kernel_size - 1)) // 2


def create_conv2d(in_chs, out_chs, kernel_size, stride=1, groups=1, bias=False):
    return nn.Conv2d(in_chs, out_chs, kernel_size, stride=stride, padding=get_padding(kernel_size, stride),
                     groups=groups, bias=bias)


class BatchNormAct2d(nn.BatchNorm2d):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, apply_act=True, act_layer=nn.Hardswish):
        super().__init__(num_features, eps=eps, momentum=momentum)
        self.drop = nn.Identity()
        self.act = act_layer() if apply_act else nn.Identity()

    def forward(self, x):
        x = F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                         self.training, self.momentum, self.eps)
        x = self.drop(x)
        x = self.act(x)
        return x


class SqueezeExcite(nn.Module):
    def __init__(self, in_chs, rd_ratio=0.25, act_layer=nn.ReLU, gate_layer=nn.Hardsigmoid):
        super().__init__()
        rd_channels = make_divisible(in_chs * rd_ratio)
        self.conv_reduce = nn.Conv2d(in_chs, rd_channels, 1, bias=True)
        self.act1 = act_layer()
        self.conv_expand = nn.Conv2d(rd_channels, in_chs, 1, bias=True)
        self.gate = gate_layer()

    def forward(self, x):
        x_se = x.mean((2, 3), keepdim=True)
        x_se = self.conv_reduce(x_se)
        x_se = self.act1(x_se)
        x_se = self.conv_expand(x_se)
        return x * self.gate(x_se)


class DepthwiseSeparableConv(nn.Module):
    def __init__(self, in_chs, out_chs, dw_kernel_size=3, stride=1, se_ratio=0.0, pw_act=True, noskip=True):
        super().__init__()
        self.has_skip = (stride == 1 and in_chs == out_chs) and not noskip
        self.conv_dw = create_conv2d(in_chs, in_chs, dw_kernel_size, stride=stride, groups=in_chs)
        self.bn1 = BatchNormAct2d(in_chs)
        self.aa = nn.Identity()
        self.se = SqueezeExcite(in_chs, rd_ratio=se_ratio) if se_ratio > 0 else nn.Identity()
        self.conv_pw = create_conv2d(in_chs, out_chs, 1)
        self.bn2 = BatchNormAct2d(out_chs, apply_act=pw_act)
        self.drop_path = nn.Identity()

    def forward(self, x):
        shortcut = x
        x = self.conv_dw(x)
        x = self.bn1(x)
        x = self.aa(x)
        x = self.se(x)
        x = self.conv_pw(x)
        x = self.bn2(x)
        if self.has_skip:
            x = self.drop_path(x) + shortcut
        return x


class SelectAdaptivePool2d(nn.Module):
    def __init__(self, pool_type="avg", flatten=False):
        super().__init__()
        self.pool_type = pool_type
        self.pool = nn.AdaptiveMaxPool2d(1) if pool_type == "max" else nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten(1) if flatten else nn.Identity()

    def forward(self, x):
        x = self.pool(x)
        x = self.flatten(x)
        return x


class MobileNetV3(nn.Module):
    """timm's MobileNetV3 container as used by lcnet_*."""

    def __init__(self, num_classes=NUM_CLASSES, num_features=NUM_FEATURES, global_pool="avg", drop_rate=0.0,
                 dsa_noskip=True):
        super().__init__()
        self.drop_rate = drop_rate
        self.conv_stem = create_conv2d(3, STEM_SIZE, 3, stride=2)
        self.bn1 = BatchNormAct2d(STEM_SIZE)
        stages, in_chs = [], STEM_SIZE
        for stage_def in ARCH_DEF:
            blocks = []
            for k, s, out_chs, se in stage_def:
                blocks.append(DepthwiseSeparableConv(in_chs, out_chs, k, s, se, pw_act=True, noskip=dsa_noskip))
                in_chs = out_chs
            stages.append(nn.Sequential(*blocks))
        self.blocks = nn.Sequential(*stages)
        self.global_pool = SelectAdaptivePool2d(pool_type=global_pool)
        self.conv_head = create_conv2d(in_chs, num_features, 1, bias=False)
        self.norm_head = nn.Identity()
        self.act2 = nn.Hardswish()
        self.flatten = nn.Flatten(1)
        self.classifier = nn.Linear(num_features, num_classes)

    def forward_features(self, x):
        x = self.conv_stem(x)
        x = self.bn1(x)
        x = self.blocks(x)
        return x

    def forward_head(self, x):
        x = self.global_pool(x)
        x = self.conv_head(x)
        x = self.norm_head(x)
        x = self.act2(x)
        x = self.flatten(x)
        if self.drop_rate > 0.0:
            x = F.dropout(x, p=self.drop_rate, training=self.training)
        return self.classifier(x)

    def forward(self, x):
        return self.forward_head(self.forward_features(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_pplcnet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = MobileNetV3(
        global_pool="max" if bug == "torch_head_pool_max" else "avg",
        dsa_noskip=bug != "torch_dsa_skip",
    )
    return m.eval()


def _image():
    rng = np.random.default_rng(11)
    return rng.standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
