"""Hand-written port, torch side: a tiny EfficientNetV2-style CNN (written by "person B", torchvision style).

The same math as port_efficientnetv2_paddle.py, re-implemented by hand in the style of
torchvision's efficientnet_v2: input [2, 3, 32, 32] (positional), stem 3x3/2 3 -> 16, two
Fused-MBConv (16 -> 24 /2, 24 -> 24, expand 4), two MBConv with Squeeze-Excitation (24 -> 32 /2,
32 -> 32, expand 4, squeeze 6 / 8), head 1x1 32 -> 64, average pool, classifier 64 -> 10. Output:
logits [2, 10]. Eval mode, BN eps 1e-3.

Torch idioms on this side:
- root `EfficientNetV2Tiny`: `features` = ONE nn.Sequential: [0] stem, [1] the Fused-MBConv
  stage (nn.Sequential), [2] the MBConv stage (nn.Sequential), [3] head; then `avgpool`
  nn.AdaptiveAvgPool2d(1) and `classifier` = nn.Sequential(nn.Dropout(0.2), nn.Linear(64, 10)).
- `Conv2dNormActivation` is an nn.Sequential subclass: [0] Conv2d (no bias), [1] BatchNorm2d,
  [2] nn.SiLU MODULE (absent when activation=False).
- `FusedMBConv` / `MBConv` keep their layers in an inner `block` nn.Sequential and own a
  `stochastic_depth` module (identity in eval, called only on the residual path). MBConv's block is
  [0] expand, [1] depthwise, [2] SqueezeExcitation, [3] project.
- `SqueezeExcitation`: nn.Linear layers `fc_reduce` / `fc_expand` on the pooled [B, C] vector, with
  F.silu and torch.sigmoid INLINE.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_fused_no_residual -> FusedMBConv never adds its input back (the use_res_connect flag is
                             computed but the residual line is missing), so the stride-1
                             Fused-MBConv loses its skip connection
  torch_head_no_act       -> the head Conv2dNormActivation is built with activation=False (no
                             SiLU before the pooling)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

NUM_CLASSES = 10
BATCH = 2
OWN_BUGS = {"torch_fused_no_residual", "torch_head_no_act"}
OTHER_BUGS = {"paddle_se_hardsigmoid", "paddle_bn_eps_default"}


class Conv2dNormActivation(nn.Sequential):
    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, groups=1, activation=True):
        layers = [
            nn.Conv2d(in_channels, out_channels, kernel_size, stride, (kernel_size - 1) // 2, groups=groups,
                      bias=False),
            nn.BatchNorm2d(out_channels, eps=1e-3, momentum=0.01),
        ]
        if activation:
            layers.append(nn.SiLU())
        super().__init__(*layers)


class StochasticDepth(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        keep = torch.empty([x.shape[0], 1, 1, 1], dtype=x.dtype, device=x.device).bernoulli_(1.0 - self.p)
        return x * keep / (1.0 - self.p)


class SqueezeExcitation(nn.Module):
    def __init__(self, channels, squeeze_channels):
        super().__init__()
        self.fc_reduce = nn.Linear(channels, squeeze_channels)
        self.fc_expand = nn.Linear(squeeze_channels, channels)

    def forward(self, x):
        scale = F.adaptive_avg_pool2d(x, 1).flatten(1)
        scale = F.silu(self.fc_reduce(scale))
        scale = torch.sigmoid(self.fc_expand(scale))
        return x * scale[:, :, None, None]


class FusedMBConv(nn.Module):
    def __init__(self, in_channels, out_channels, stride, expand_ratio, sd_prob, no_residual=False):
        super().__init__()
        self.use_res_connect = stride == 1 and in_channels == out_channels
        self.no_residual = no_residual
        hidden = in_channels * expand_ratio
        self.block = nn.Sequential(
            Conv2dNormActivation(in_channels, hidden, 3, stride),
            Conv2dNormActivation(hidden, out_channels, 1, activation=False),
        )
        self.stochastic_depth = StochasticDepth(sd_prob)

    def forward(self, x):
        result = self.block(x)
        if self.use_res_connect:
            result = self.stochastic_depth(result)
            if not self.no_residual:
                result = result + x
        return result


class MBConv(nn.Module):
    def __init__(self, in_channels, out_channels, stride, expand_ratio, sd_prob):
        super().__init__()
        self.use_res_connect = stride == 1 and in_channels == out_channels
        hidden = in_channels * expand_ratio
        squeeze = max(1, in_channels // 4)
        self.block = nn.Sequential(
            Conv2dNormActivation(in_channels, hidden, 1),
            Conv2dNormActivation(hidden, hidden, 3, stride, groups=hidden),
            SqueezeExcitation(hidden, squeeze),
            Conv2dNormActivation(hidden, out_channels, 1, activation=False),
        )
        self.stochastic_depth = StochasticDepth(sd_prob)

    def forward(self, x):
        result = self.block(x)
        if self.use_res_connect:
            result = self.stochastic_depth(result)
            result = result + x
        return result


class EfficientNetV2Tiny(nn.Module):
    def __init__(self, num_classes=NUM_CLASSES, bug=""):
        super().__init__()
        sd = [0.0, 0.05, 0.1, 0.15]  # linearly growing stochastic-depth rate per block (train only)
        no_res = bug == "torch_fused_no_residual"
        self.features = nn.Sequential(
            Conv2dNormActivation(3, 16, 3, 2),
            nn.Sequential(
                FusedMBConv(16, 24, 2, 4, sd[0], no_res),
                FusedMBConv(24, 24, 1, 4, sd[1], no_res),
            ),
            nn.Sequential(
                MBConv(24, 32, 2, 4, sd[2]),
                MBConv(32, 32, 1, 4, sd[3]),
            ),
            Conv2dNormActivation(32, 64, 1, activation=bug != "torch_head_no_act"),
        )
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(p=0.2, inplace=True), nn.Linear(64, num_classes))

    def forward(self, x):
        x = self.features(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_efficientnetv2 torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = EfficientNetV2Tiny(bug=bug if bug in OWN_BUGS else "")
    return m.eval()


def _image():
    rng = np.random.default_rng(4242)
    return rng.standard_normal((BATCH, 3, 32, 32)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
