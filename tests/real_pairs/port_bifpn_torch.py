"""Hand-written port, torch side: an EfficientDet-style BiFPN neck over P3 / P4 / P5 (written by "person B").

The same math as port_bifpn_paddle.py, re-implemented by hand in the style of the zylo117
EfficientDet-PyTorch code: inputs P3 [2, 16, 16, 16], P4 [2, 16, 8, 8], P5 [2, 16, 4, 4]
(positional), two stacked BiFPN cells of 16 channels, a shared 1x1 `regressor` conv (16 -> 4)
per level, outputs permuted to [B, H*W, 4] and concatenated: [2, 336, 4].

Torch idioms on this side:
- root `EfficientDetNeck`: `bifpn` = nn.Sequential of two `BiFPN` cells, called ONCE with the
  tuple (P3, P4, P5) (each cell takes and returns a tuple); `regressor` nn.Conv2d(16, 4, 1).
- `BiFPN` registers ONE fusion-weight tensor PER PATH first: `td_weight` [2, 2] (row 0: the
  P4 top-down node, row 1: the P3 output node) and `bu_weight` [5] (elements 0:3: the P4 output
  node, 3:5: the P5 output node); then `conv4_up`, `conv3_up`, `conv4_down`, `conv5_down`
  (SeparableConvBlock), `p4_upsample`, `p3_upsample` (nn.Upsample(scale_factor=2,
  mode="nearest")) and `p4_downsample`, `p5_downsample` (MaxPool2dStaticSamePadding). The
  normalisation relu(w) / (sum + 1e-4) is done per row / per slice inline in the forward.
- `SeparableConvBlock` registers `depthwise_conv` (3x3, groups=16, no bias), `pointwise_conv`
  (1x1), `bn` (nn.BatchNorm2d(16, momentum=0.01, eps=1e-3)) and `act` (nn.SiLU) in that order,
  but calls `act` FIRST: act -> depthwise -> pointwise -> bn.
- `MaxPool2dStaticSamePadding`: computes TF 'SAME' padding (extra = (ceil(H / 2) - 1) * 2 + 3 -
  H, half of it before, the rest after), F.pad with -inf, then its `pool` nn.MaxPool2d(3, 2).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_pool_zero_pad  -> MaxPool2dStaticSamePadding pads with F.pad's default value 0 instead
                          of -inf, so a bottom / right border window whose real cells are all
                          negative returns 0 (only the border cells change)
  torch_td_uses_p4_in  -> the P3 top-down node upsamples the cell's INPUT P4 instead of the fused
                          top-down P4 (p4_up)
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

NUM_CHANNELS, NUM_OUT, NUM_CELLS = 16, 4, 2
EPSILON = 1e-4
BATCH = 2
OWN_BUGS = {"torch_pool_zero_pad", "torch_td_uses_p4_in"}
OTHER_BUGS = {"paddle_fuse_no_norm", "paddle_p5_relu"}


class SeparableConvBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.depthwise_conv = nn.Conv2d(channels, channels, 3, stride=1, padding=1, groups=channels, bias=False)
        self.pointwise_conv = nn.Conv2d(channels, channels, 1)
        self.bn = nn.BatchNorm2d(channels, momentum=0.01, eps=1e-3)
        self.act = nn.SiLU()

    def forward(self, x):
        x = self.act(x)
        x = self.depthwise_conv(x)
        x = self.pointwise_conv(x)
        return self.bn(x)


class MaxPool2dStaticSamePadding(nn.Module):
    def __init__(self, kernel_size=3, stride=2, zero_pad=False):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size, stride)
        self.kernel_size, self.stride, self.zero_pad = kernel_size, stride, zero_pad

    def forward(self, x):
        h, w = x.shape[-2:]
        extra_v = (math.ceil(h / self.stride) - 1) * self.stride - h + self.kernel_size
        extra_h = (math.ceil(w / self.stride) - 1) * self.stride - w + self.kernel_size
        top, left = extra_v // 2, extra_h // 2
        bottom, right = extra_v - top, extra_h - left
        if self.zero_pad:
            x = F.pad(x, [left, right, top, bottom])
        else:
            x = F.pad(x, [left, right, top, bottom], value=float("-inf"))
        return self.pool(x)


class BiFPN(nn.Module):
    def __init__(self, num_channels, zero_pad=False, td_uses_input=False):
        super().__init__()
        self.td_uses_input = td_uses_input
        self.td_weight = nn.Parameter(torch.ones(2, 2, dtype=torch.float32))
        self.bu_weight = nn.Parameter(torch.ones(5, dtype=torch.float32))
        self.conv4_up = SeparableConvBlock(num_channels)
        self.conv3_up = SeparableConvBlock(num_channels)
        self.conv4_down = SeparableConvBlock(num_channels)
        self.conv5_down = SeparableConvBlock(num_channels)
        self.p4_upsample = nn.Upsample(scale_factor=2, mode="nearest")
        self.p3_upsample = nn.Upsample(scale_factor=2, mode="nearest")
        self.p4_downsample = MaxPool2dStaticSamePadding(3, 2, zero_pad)
        self.p5_downsample = MaxPool2dStaticSamePadding(3, 2, zero_pad)

    def forward(self, inputs):
        p3_in, p4_in, p5_in = inputs
        # top-down path
        td = F.relu(self.td_weight)
        td = td / (td.sum(dim=1, keepdim=True) + EPSILON)
        p4_up = self.conv4_up(td[0, 0] * p4_in + td[0, 1] * self.p4_upsample(p5_in))
        p4_for_p3 = p4_in if self.td_uses_input else p4_up
        p3_out = self.conv3_up(td[1, 0] * p3_in + td[1, 1] * self.p3_upsample(p4_for_p3))
        # bottom-up path
        bu = F.relu(self.bu_weight)
        w4 = bu[:3] / (bu[:3].sum() + EPSILON)
        w5 = bu[3:] / (bu[3:].sum() + EPSILON)
        p4_out = self.conv4_down(w4[0] * p4_in + w4[1] * p4_up + w4[2] * self.p4_downsample(p3_out))
        p5_out = self.conv5_down(w5[0] * p5_in + w5[1] * self.p5_downsample(p4_out))
        return p3_out, p4_out, p5_out


class EfficientDetNeck(nn.Module):
    def __init__(self, zero_pad=False, td_uses_input=False):
        super().__init__()
        self.bifpn = nn.Sequential(*[BiFPN(NUM_CHANNELS, zero_pad, td_uses_input) for _ in range(NUM_CELLS)])
        self.regressor = nn.Conv2d(NUM_CHANNELS, NUM_OUT, kernel_size=1)

    def forward(self, p3, p4, p5):
        feats = self.bifpn((p3, p4, p5))
        outs = []
        for feat in feats:
            y = self.regressor(feat)
            outs.append(y.permute(0, 2, 3, 1).contiguous().view(y.shape[0], -1, NUM_OUT))
        return torch.cat(outs, dim=1)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_bifpn torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = EfficientDetNeck(zero_pad=bug == "torch_pool_zero_pad", td_uses_input=bug == "torch_td_uses_p4_in")
    return m.eval()


def _feats():
    rng = np.random.default_rng(5)
    return [rng.standard_normal((BATCH, NUM_CHANNELS, s, s)).astype("float32") for s in (16, 8, 4)]


def inputs():
    return tuple(torch.from_numpy(a) for a in _feats()), {}


def loss(output):
    # box regressions [2, 336, 4]
    return (output**2).mean()
