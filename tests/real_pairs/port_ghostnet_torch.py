"""Hand-written port, torch side: a tiny GhostNet classifier (written by "person B", Huawei / timm style).

The same math as port_ghostnet_paddle.py, re-implemented by hand: input `x` [2, 3, 32, 32]
(positional, numpy rng seed 41), stem conv 3x3 / 2 (3 -> 8), four ghost bottlenecks
(k, mid, out, SE, stride) = (3, 16, 8, -, 1), (3, 24, 12, -, 2), (5, 27, 12, SE, 1),
(5, 36, 21, SE, 2), a 1x1 conv-BN-relu to 48, global average pool, a 1x1 conv head 48 -> 64 with
bias and relu, and the classifier 64 -> 10. Output: logits [2, 10].

Torch idioms on this side:
- root `GhostNet`: the stem as three modules `conv_stem` (Conv2d, no bias), `bn1`, `act1`
  (nn.ReLU); `blocks` = nn.Sequential of STAGES, each stage an nn.Sequential holding one
  `GhostBottleneck` (blocks.0.0 ... blocks.3.0), and the last 1x1 conv as a fifth stage
  `blocks.4` = `ConvBnAct` (`conv`, `bn1`, `act1`); then `global_pool` (nn.AdaptiveAvgPool2d(1)),
  `conv_head` (a 1x1 Conv2d(48, 64) WITH bias, on the pooled [B, 48, 1, 1] map), `act2`,
  `flatten` (nn.Flatten) and `classifier` Linear(64, 10).
- `GhostModule`: `primary_conv` = nn.Sequential(Conv2d 1x1, BatchNorm2d, nn.ReLU() or an empty
  nn.Sequential()), `cheap_operation` = nn.Sequential(depthwise Conv2d 3x3, BatchNorm2d, nn.ReLU()
  or an empty nn.Sequential()); torch.cat + slice.
- `GhostBottleneck`: `ghost1`, `conv_dw` + `bn_dw` (stride 2 only), `se` (None without SE),
  `ghost2`, and `shortcut` = nn.Sequential() (identity) or nn.Sequential(depthwise conv, BN,
  1x1 conv, BN).
- Every BatchNorm is built by a `norm_layer` callable handed down the constructors (timm style,
  default nn.BatchNorm2d).
- `SqueezeExcite`: `avg_pool`, 1x1 CONVOLUTIONS `conv_reduce` / `conv_expand` (with bias) around
  `act1` (nn.ReLU), and `gate` (an nn.Hardsigmoid module: relu6(x + 3) / 6).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_bn_eps_tf         -> model() passes norm_layer=partial(nn.BatchNorm2d, eps=1e-3) (the
                             TF-port value) instead of nn.BatchNorm2d (eps 1e-5), so every
                             BatchNorm of the network gets eps 1e-3 (precision-level)
  torch_cheap_relu_always -> GhostModule builds cheap_operation with nn.ReLU() unconditionally
                             (the `if relu else nn.Sequential()` is forgotten there), so the
                             second ghost module of every bottleneck rectifies its cheap half
"""
import math
import os
from functools import partial

import numpy as np
import torch
from torch import nn

STEM_CHS, FINAL_CHS, HEAD_CHS, NUM_CLASSES = 8, 48, 64, 10
# per stage: kernel, mid, out, se reduced width (0 = none), stride
STAGES = [[3, 16, 8, 0, 1], [3, 24, 12, 0, 2], [5, 27, 12, 8, 1], [5, 36, 21, 12, 2]]
BATCH = 2
OWN_BUGS = {"torch_bn_eps_tf", "torch_cheap_relu_always"}
OTHER_BUGS = {"paddle_se_hsig_slope", "paddle_se_before_dw"}


class SqueezeExcite(nn.Module):
    def __init__(self, in_chs, reduced_chs):
        super().__init__()
        self.avg_pool = nn.AdaptiveAvgPool2d(1)
        self.conv_reduce = nn.Conv2d(in_chs, reduced_chs, 1, bias=True)
        self.act1 = nn.ReLU()
        self.conv_expand = nn.Conv2d(reduced_chs, in_chs, 1, bias=True)
        self.gate = nn.Hardsigmoid()

    def forward(self, x):
        x_se = self.avg_pool(x)
        x_se = self.conv_expand(self.act1(self.conv_reduce(x_se)))
        return x * self.gate(x_se)


class GhostModule(nn.Module):
    def __init__(self, inp, oup, kernel_size=1, ratio=2, dw_size=3, relu=True, cheap_relu_always=False,
                 norm_layer=nn.BatchNorm2d):
        super().__init__()
        self.oup = oup
        init_channels = math.ceil(oup / ratio)
        new_channels = init_channels * (ratio - 1)
        self.primary_conv = nn.Sequential(
            nn.Conv2d(inp, init_channels, kernel_size, 1, kernel_size // 2, bias=False),
            norm_layer(init_channels),
            nn.ReLU() if relu else nn.Sequential(),
        )
        self.cheap_operation = nn.Sequential(
            nn.Conv2d(init_channels, new_channels, dw_size, 1, dw_size // 2, groups=init_channels, bias=False),
            norm_layer(new_channels),
            nn.ReLU() if (relu or cheap_relu_always) else nn.Sequential(),
        )

    def forward(self, x):
        x1 = self.primary_conv(x)
        x2 = self.cheap_operation(x1)
        out = torch.cat([x1, x2], dim=1)
        return out[:, : self.oup, :, :]


class GhostBottleneck(nn.Module):
    def __init__(self, in_chs, mid_chs, out_chs, dw_kernel_size=3, stride=1, se_chs=0, cheap_relu_always=False,
                 norm_layer=nn.BatchNorm2d):
        super().__init__()
        self.stride = stride
        self.ghost1 = GhostModule(in_chs, mid_chs, relu=True, cheap_relu_always=cheap_relu_always, norm_layer=norm_layer)
        if self.stride > 1:
            self.conv_dw = nn.Conv2d(mid_chs, mid_chs, dw_kernel_size, stride=stride,
                                     padding=(dw_kernel_size - 1) // 2, groups=mid_chs, bias=False)
            self.bn_dw = norm_layer(mid_chs)
        self.se = SqueezeExcite(mid_chs, se_chs) if se_chs else None
        self.ghost2 = GhostModule(mid_chs, out_chs, relu=False, cheap_relu_always=cheap_relu_always, norm_layer=norm_layer)
        if in_chs == out_chs and self.stride == 1:
            self.shortcut = nn.Sequential()
        else:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_chs, in_chs, dw_kernel_size, stride=stride, padding=(dw_kernel_size - 1) // 2,
                          groups=in_chs, bias=False),
                norm_layer(in_chs),
                nn.Conv2d(in_chs, out_chs, 1, stride=1, padding=0, bias=False),
                norm_layer(out_chs),
            )

    def forward(self, x):
        residual = x
        x = self.ghost1(x)
        if self.stride > 1:
            x = self.bn_dw(self.conv_dw(x))
        if self.se is not None:
            x = self.se(x)
        x = self.ghost2(x)
        x += self.shortcut(residual)
        return x


class ConvBnAct(nn.Module):
    def __init__(self, in_chs, out_chs, kernel_size, norm_layer=nn.BatchNorm2d):
        super().__init__()
        self.conv = nn.Conv2d(in_chs, out_chs, kernel_size, 1, kernel_size // 2, bias=False)
        self.bn1 = norm_layer(out_chs)
        self.act1 = nn.ReLU()

    def forward(self, x):
        return self.act1(self.bn1(self.conv(x)))


class GhostNet(nn.Module):
    def __init__(self, cheap_relu_always=False, norm_layer=nn.BatchNorm2d):
        super().__init__()
        self.conv_stem = nn.Conv2d(3, STEM_CHS, 3, 2, 1, bias=False)
        self.bn1 = norm_layer(STEM_CHS)
        self.act1 = nn.ReLU()
        stages, input_channel = [], STEM_CHS
        for k, mid, out, se_chs, s in STAGES:
            stages.append(nn.Sequential(GhostBottleneck(input_channel, mid, out, k, s, se_chs, cheap_relu_always, norm_layer)))
            input_channel = out
        stages.append(ConvBnAct(input_channel, FINAL_CHS, 1, norm_layer))
        self.blocks = nn.Sequential(*stages)
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.conv_head = nn.Conv2d(FINAL_CHS, HEAD_CHS, 1, 1, 0, bias=True)
        self.act2 = nn.ReLU()
        self.flatten = nn.Flatten(1)
        self.classifier = nn.Linear(HEAD_CHS, NUM_CLASSES)

    def forward(self, x):
        x = self.act1(self.bn1(self.conv_stem(x)))
        x = self.blocks(x)
        x = self.global_pool(x)
        x = self.act2(self.conv_head(x))
        return self.classifier(self.flatten(x))  # [B, 10]


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_ghostnet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    norm_layer = partial(nn.BatchNorm2d, eps=1e-3) if bug == "torch_bn_eps_tf" else nn.BatchNorm2d
    m = GhostNet(cheap_relu_always=bug == "torch_cheap_relu_always", norm_layer=norm_layer)
    return m.eval()


def _images():
    rng = np.random.default_rng(41)
    return rng.standard_normal((BATCH, 3, 32, 32)).astype("float32")


def inputs():
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
