"""Hand-written port, torch side: a tiny ReXNet-style CNN (written by "person B", timm rexnet.py style).

The same network as port_rexnet_paddle.py, re-implemented by hand: input `images` [2, 3, 32, 32]
(positional), output logits [2, 10]. Stem conv3x3/2 16 (SiLU); linear bottlenecks 16->20 (t 1),
20->28 (t 2, stride 2, SE), 28->36 (t 2, SE), 36->44 (t 2, SE); final conv1x1 64 (SiLU); pool;
linear classifier. SE width = mid // 4, with a BatchNorm between its two 1x1 convs. Partial
residual (stride 1 and in <= out): the block input is added to the first `in` output channels.

Torch idioms on this side (timm layout):
- root `RexNet` registers `stem` (ConvNormAct), `features` (nn.Sequential: the four
  LinearBottleneck blocks as features.0-3, then the final ConvNormAct as features.4) and `head`
  (ClassifierHead: `global_pool` nn.AdaptiveAvgPool2d(1), `drop` nn.Dropout, `fc` nn.Linear(64, 10),
  weight [10, 64]).
- `ConvNormAct`: `conv` (no bias), `bn`, and `act` (nn.SiLU) only when an activation is asked for.
- `LinearBottleneck` registers `conv_dw` FIRST, then `conv_exp` (None when t == 1), `se` (None
  without SE), `act_dw` (nn.ReLU6), `conv_pwl`; the forward calls conv_exp, conv_dw, se, act_dw,
  conv_pwl and adds the partial residual IN PLACE: x[:, 0:in_channels] += shortcut (timm's line;
  it writes into conv_pwl's output tensor after that module has returned it).
- `SEModule`: `fc1`, `bn`, `act` (nn.ReLU), `fc2`; the squeeze (x.mean((2, 3), keepdim=True)) and
  the sigmoid gate are inline.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_se_squeeze_h_only -> the SE squeeze is x.mean(2, keepdim=True) (height only) instead of
                             x.mean((2, 3), keepdim=True): the gate becomes [B, C, 1, W] and
                             broadcasts over the rows, in every SE
  torch_se_bn_eps         -> SEModule builds its BatchNorm with eps=1e-3 instead of 1e-5
                             (precision-level), in every SE
"""
import os

import numpy as np
import torch
from torch import nn

STEM_CHS, FEAT_CHS, NUM_CLASSES, SE_RD_DIV = 16, 64, 10, 4
# (in_chs, out_chs, exp_ratio, stride, se)
BLOCK_CFG = ((16, 20, 1, 1, False), (20, 28, 2, 2, True), (28, 36, 2, 1, True), (36, 44, 2, 1, True))
BATCH = 2
OWN_BUGS = {"torch_se_squeeze_h_only", "torch_se_bn_eps"}
OTHER_BUGS = {"paddle_residual_on_last", "paddle_exp_hardswish"}


class ConvNormAct(nn.Module):
    def __init__(self, in_chs, out_chs, kernel_size=1, stride=1, groups=1, apply_act=True):
        super().__init__()
        self.conv = nn.Conv2d(in_chs, out_chs, kernel_size, stride, kernel_size // 2, groups=groups, bias=False)
        self.bn = nn.BatchNorm2d(out_chs)
        if apply_act:
            self.act = nn.SiLU()
        else:
            self.act = None

    def forward(self, x):
        x = self.bn(self.conv(x))
        if self.act is not None:
            x = self.act(x)
        return x


class SEModule(nn.Module):
    def __init__(self, channels, rd_channels, h_only=False, bn_eps=1e-5):
        super().__init__()
        self.h_only = h_only
        self.fc1 = nn.Conv2d(channels, rd_channels, kernel_size=1, bias=True)
        self.bn = nn.BatchNorm2d(rd_channels, eps=bn_eps)
        self.act = nn.ReLU(inplace=False)
        self.fc2 = nn.Conv2d(rd_channels, channels, kernel_size=1, bias=True)

    def forward(self, x):
        x_se = x.mean(2, keepdim=True) if self.h_only else x.mean((2, 3), keepdim=True)
        x_se = self.fc1(x_se)
        x_se = self.act(self.bn(x_se))
        x_se = self.fc2(x_se)
        return x * torch.sigmoid(x_se)


class LinearBottleneck(nn.Module):
    def __init__(self, in_chs, out_chs, exp_ratio, stride, use_se, se_h_only=False, se_bn_eps=1e-5):
        super().__init__()
        self.use_shortcut = stride == 1 and in_chs <= out_chs
        self.in_channels = in_chs
        dw_chs = in_chs * exp_ratio
        self.conv_dw = ConvNormAct(dw_chs, dw_chs, kernel_size=3, stride=stride, groups=dw_chs, apply_act=False)
        self.conv_exp = ConvNormAct(in_chs, dw_chs) if exp_ratio != 1 else None
        self.se = SEModule(dw_chs, dw_chs // SE_RD_DIV, se_h_only, se_bn_eps) if use_se else None
        self.act_dw = nn.ReLU6()
        self.conv_pwl = ConvNormAct(dw_chs, out_chs, 1, apply_act=False)

    def forward(self, x):
        shortcut = x
        if self.conv_exp is not None:
            x = self.conv_exp(x)
        x = self.conv_dw(x)
        if self.se is not None:
            x = self.se(x)
        x = self.act_dw(x)
        x = self.conv_pwl(x)
        if self.use_shortcut:
            x[:, 0:self.in_channels] += shortcut
        return x


class ClassifierHead(nn.Module):
    def __init__(self, in_features, num_classes):
        super().__init__()
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.drop = nn.Dropout(0.2)
        self.fc = nn.Linear(in_features, num_classes)

    def forward(self, x):
        x = self.global_pool(x).flatten(1)
        x = self.drop(x)
        return self.fc(x)


class RexNet(nn.Module):
    def __init__(self, se_h_only=False, se_bn_eps=1e-5):
        super().__init__()
        self.stem = ConvNormAct(3, STEM_CHS, 3, stride=2)
        blocks = [LinearBottleneck(*cfg, se_h_only=se_h_only, se_bn_eps=se_bn_eps) for cfg in BLOCK_CFG]
        blocks.append(ConvNormAct(BLOCK_CFG[-1][1], FEAT_CHS))
        self.features = nn.Sequential(*blocks)
        self.head = ClassifierHead(FEAT_CHS, NUM_CLASSES)

    def forward(self, images):
        x = self.stem(images)
        x = self.features(x)
        return self.head(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_rexnet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = RexNet(se_h_only=bug == "torch_se_squeeze_h_only", se_bn_eps=1e-3 if bug == "torch_se_bn_eps" else 1e-5)
    return m.eval()


def _images():
    rng = np.random.default_rng(44)
    return rng.standard_normal((BATCH, 3, 32, 32)).astype("float32")


def inputs():
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
