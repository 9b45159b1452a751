"""Hand-written port, torch side: a tiny normalizer-free ResNet, NFNet style (written by "person B", timm style).

The same math as port_nfnet_paddle.py, re-implemented by hand: images [2, 3, 16, 16] (positional)
-> logits [2, 10]. Scaled weight-standardised convs (per output channel, biased variance, eps
1e-6 added to the variance, times gain / sqrt(fan_in)), GELU times gamma 1.7015043497085571, a
2-conv stem, pre-activation NF blocks (alpha 0.2, input scaled by 1 / expected std, a skip-init
scalar gain on the residual branch), final activation, global average pool and a linear head.

Torch idioms on this side:
- root `NormFreeNet`: `stem` = nn.Sequential(OrderedDict(conv1, act1, conv2)), `stages` = nn.Sequential
  of two nn.Sequential stages (2 blocks, then 1 block), `final_act` (GammaAct), `head` (a
  `ClassifierHead`: `global_pool` nn.AdaptiveAvgPool2d(1), `flatten` nn.Flatten(1), `fc`
  nn.Linear(32, 10)).
- `ScaledStdConv2d` subclasses nn.Conv2d (so `weight`, `bias` come first) and registers `gain`
  [out, 1, 1, 1] after them; the standardisation is timm style,
  (w - mean) / sqrt(var + eps) * (gain * fan_in ** -0.5), with torch.var(unbiased=False).
- `GammaAct` is a module: F.gelu(x) * gamma, gamma looked up in a table of non-linearity gains.
- `NormFreeBlock` registers `downsample` (a `DownsampleConv` module holding `conv`, only at the
  transition block), `act1`, `conv1`, `act2`, `conv2`, then the scalar `skipinit_gain`
  (a [1] parameter); beta is stored as 1 / expected std and MULTIPLIED.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_ws_var_unbiased  -> ScaledStdConv2d calls torch.var(...) without unbiased=False, so the
                            weight variance is the unbiased estimator (divides by fan_in - 1)
  torch_skipinit_missing -> NormFreeBlock.forward never multiplies the residual branch by
                            skipinit_gain
"""
import os
from collections import OrderedDict

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

_nonlin_gamma = dict(
    identity=1.0,
    gelu=1.7015043497085571,
    relu=1.7139588594436646,
    silu=1.7881293296813965,
)
NUM_CLASSES, STEM_CHS, CHANNELS, DEPTHS = 10, 8, (16, 32), (2, 1)
ALPHA = 0.2
BATCH, IMG = 2, 16
OWN_BUGS = {"torch_ws_var_unbiased", "torch_skipinit_missing"}
OTHER_BUGS = {"paddle_expected_var_alpha", "paddle_gelu_tanh"}


class ScaledStdConv2d(nn.Conv2d):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, eps=1e-6,
                 unbiased_bug=False):
        super().__init__(in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=True)
        self.gain = nn.Parameter(torch.ones(self.out_channels, 1, 1, 1))
        self.scale = self.weight[0].numel() ** -0.5  # fan_in ** -0.5
        self.eps = eps
        self.unbiased_bug = unbiased_bug

    def forward(self, x):
        w = self.weight
        mean = w.mean(dim=(1, 2, 3), keepdim=True)
        if self.unbiased_bug:
            var = torch.var(w, dim=(1, 2, 3), keepdim=True)
        else:
            var = torch.var(w, dim=(1, 2, 3), unbiased=False, keepdim=True)
        weight = (w - mean) / torch.sqrt(var + self.eps) * (self.gain * self.scale)
        return F.conv2d(x, weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class GammaAct(nn.Module):
    def __init__(self, act_type="gelu"):
        super().__init__()
        self.gamma = _nonlin_gamma[act_type]

    def forward(self, x):
        return F.gelu(x) * self.gamma


class DownsampleConv(nn.Module):
    def __init__(self, in_chs, out_chs, stride, conv_kwargs):
        super().__init__()
        self.conv = ScaledStdConv2d(in_chs, out_chs, 1, stride=stride, **conv_kwargs)

    def forward(self, x):
        return self.conv(x)


class NormFreeBlock(nn.Module):
    def __init__(self, in_chs, out_chs, stride, alpha, beta, conv_kwargs, skipinit_bug=False):
        super().__init__()
        self.alpha, self.beta = alpha, beta
        self.skipinit_bug = skipinit_bug
        self.downsample = None
        if in_chs != out_chs or stride != 1:
            self.downsample = DownsampleConv(in_chs, out_chs, stride, conv_kwargs)
        self.act1 = GammaAct("gelu")
        self.conv1 = ScaledStdConv2d(in_chs, out_chs, 3, stride=stride, padding=1, **conv_kwargs)
        self.act2 = GammaAct("gelu")
        self.conv2 = ScaledStdConv2d(out_chs, out_chs, 3, padding=1, **conv_kwargs)
        self.skipinit_gain = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        out = self.act1(x) * self.beta
        shortcut = x
        if self.downsample is not None:
            shortcut = self.downsample(out)
        out = self.conv1(out)
        out = self.conv2(self.act2(out))
        if not self.skipinit_bug:
            out = out * self.skipinit_gain
        return out * self.alpha + shortcut


class ClassifierHead(nn.Module):
    def __init__(self, in_chs, num_classes):
        super().__init__()
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten(1)
        self.fc = nn.Linear(in_chs, num_classes)

    def forward(self, x):
        return self.fc(self.flatten(self.global_pool(x)))


class NormFreeNet(nn.Module):
    def __init__(self, unbiased_bug=False, skipinit_bug=False):
        super().__init__()
        conv_kwargs = dict(eps=1e-6, unbiased_bug=unbiased_bug)
        self.stem = nn.Sequential(OrderedDict([
            ("conv1", ScaledStdConv2d(3, STEM_CHS, 3, stride=2, padding=1, **conv_kwargs)),
            ("act1", GammaAct("gelu")),
            ("conv2", ScaledStdConv2d(STEM_CHS, CHANNELS[0], 3, stride=1, padding=1, **conv_kwargs)),
        ]))
        stages, prev_chs, expected_var = [], CHANNELS[0], 1.0
        for stage_idx, (out_chs, depth) in enumerate(zip(CHANNELS, DEPTHS)):
            stride = 1 if stage_idx == 0 else 2
            blocks = []
            for block_idx in range(depth):
                blocks.append(NormFreeBlock(prev_chs, out_chs, stride if block_idx == 0 else 1, ALPHA,
                                            1.0 / expected_var**0.5, conv_kwargs, skipinit_bug))
                if block_idx == 0:
                    expected_var = 1.0  # reset after the first block of each stage
                expected_var += ALPHA**2
                prev_chs = out_chs
            stages.append(nn.Sequential(*blocks))
        self.stages = nn.Sequential(*stages)
        self.final_act = GammaAct("gelu")
        self.head = ClassifierHead(prev_chs, NUM_CLASSES)

    def forward(self, x):
        x = self.stem(x)
        x = self.stages(x)
        x = self.final_act(x)
        return self.head(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_nfnet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = NormFreeNet(unbiased_bug=bug == "torch_ws_var_unbiased", skipinit_bug=bug == "torch_skipinit_missing")
    return m.eval()


def _images():
    rng = np.random.default_rng(73)
    return rng.standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
