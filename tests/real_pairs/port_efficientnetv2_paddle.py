"""Hand-written port, paddle side: a tiny EfficientNetV2-style CNN (written by "person A", timm style).

Input: one image batch [2, 3, 32, 32] (positional, NCHW, numpy rng seed 4242, standard normal).
Output: logits [2, 10]. Eval mode: every BatchNorm uses its (trained-looking) running statistics,
BN eps 1e-3 (the TF EfficientNet value) everywhere.

Network (SiLU everywhere except the SE gate):
  stem       3x3 conv stride 2, 3 -> 16, BN, SiLU                               [2, 16, 16, 16]
  stage 0    Fused-MBConv 16 -> 24, expand 4, stride 2                          [2, 24, 8, 8]
             Fused-MBConv 24 -> 24, expand 4, stride 1, residual
  stage 1    MBConv 24 -> 32, expand 4, stride 2, SE (24 * 0.25 = 6 squeeze)   [2, 32, 4, 4]
             MBConv 32 -> 32, expand 4, stride 1, SE (8 squeeze), residual
  head       1x1 conv 32 -> 64, BN, SiLU; global average pool; Linear(64, 10)
Fused-MBConv: 3x3 conv (in -> in * 4, stride) + BN + SiLU, then 1x1 project conv + BN (no act).
MBConv: 1x1 expand conv + BN + SiLU, 3x3 depthwise conv (stride) + BN + SiLU,
        Squeeze-Excitation s = sigmoid(W2 silu(W1 mean_hw(x) + b1) + b2), x * s,
        then 1x1 project conv + BN (no act).
Residual only when stride 1 and in == out (no stochastic depth in eval).

Paddle idioms on this side:
- root `EfficientNetV2`: `conv_stem` (ConvBnAct), `blocks` = nn.Sequential of two
  nn.Sequential stages, `conv_head` (ConvBnAct), `global_pool` nn.AdaptiveAvgPool2D(1),
  `classifier` nn.Linear(64, 10) (weight [in, out]).
- `ConvBnAct`: `conv` (bias_attr=False), `bn` BatchNorm2D(momentum=0.99, epsilon=1e-3) and the
  SiLU INLINE (F.silu) when `apply_act`.
- `FusedMBConv`: `conv_exp`, `conv_pwl` (ConvBnAct), residual add inline.
- `MBConv` registers `se` FIRST, then `conv_pw`, `conv_dw`, `conv_pwl` (called pw, dw, se, pwl).
- `SqueezeExcite`: 1x1 convs `conv_reduce` / `conv_expand` (with bias) on the [B, C, 1, 1] mean,
  and the activations as MODULES: `act1` nn.Silu, `gate` nn.Sigmoid.

The torch side (port_efficientnetv2_torch.py) was written independently (torchvision style): one
`features` nn.Sequential, conv-BN-act as nn.Sequential subclasses with nn.SiLU modules, blocks
holding an inner `block` nn.Sequential, an SE with nn.Linear layers and inline F.silu /
torch.sigmoid, and stochastic-depth modules that are identities in eval.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_se_hardsigmoid -> the SE gate is built as nn.Hardsigmoid (copied from a MobileNetV3
                           port) instead of nn.Sigmoid
  paddle_bn_eps_default -> ConvBnAct builds its BatchNorm2D without epsilon=1e-3, so paddle's
                           default 1e-5 is used in every conv-BN (precision-level)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

NUM_CLASSES = 10
BATCH = 2
OWN_BUGS = {"paddle_se_hardsigmoid", "paddle_bn_eps_default"}
OTHER_BUGS = {"torch_fused_no_residual", "torch_head_no_act"}
_BUG = {"bug": ""}


class ConvBnAct(nn.Layer):
    def __init__(self, in_chs, out_chs, kernel_size, stride=1, groups=1, apply_act=True):
        super().__init__()
        self.apply_act = apply_act
        self.conv = nn.Conv2D(in_chs, out_chs, kernel_size, stride=stride, padding=kernel_size // 2,
                              groups=groups, bias_attr=False)
        if _BUG["bug"] == "paddle_bn_eps_default":
            self.bn = nn.BatchNorm2D(out_chs, momentum=0.99)
        else:
            self.bn = nn.BatchNorm2D(out_chs, momentum=0.99, epsilon=1e-3)

    def forward(self, x):
        x = self.bn(self.conv(x))
        if self.apply_act:
            x = F.silu(x)
        return x


class SqueezeExcite(nn.Layer):
    def __init__(self, chs, rd_chs):
        super().__init__()
        self.conv_reduce = nn.Conv2D(chs, rd_chs, 1)
        self.act1 = nn.Silu()
        self.conv_expand = nn.Conv2D(rd_chs, chs, 1)
        self.gate = nn.Hardsigmoid() if _BUG["bug"] == "paddle_se_hardsigmoid" else nn.Sigmoid()

    def forward(self, x):
        x_se = x.mean(axis=[2, 3], keepdim=True)
        x_se = self.conv_reduce(x_se)
        x_se = self.act1(x_se)
        x_se = self.conv_expand(x_se)
        return x * self.gate(x_se)


class FusedMBConv(nn.Layer):
    def __init__(self, in_chs, out_chs, stride, exp_ratio):
        super().__init__()
        mid = in_chs * exp_ratio
        self.has_skip = stride == 1 and in_chs == out_chs
        self.conv_exp = ConvBnAct(in_chs, mid, 3, stride=stride)
        self.conv_pwl = ConvBnAct(mid, out_chs, 1, apply_act=False)

    def forward(self, x):
        shortcut = x
        x = self.conv_exp(x)
        x = self.conv_pwl(x)
        if self.has_skip:
            x = x + shortcut
        return x


class MBConv(nn.Layer):
    def __init__(self, in_chs, out_chs, stride, exp_ratio, se_ratio=0.25):
        super().__init__()
        mid = in_chs * exp_ratio
        self.has_skip = stride == 1 and in_chs == out_chs
        self.se = SqueezeExcite(mid, max(1, int(in_chs * se_ratio)))
        self.conv_pw = ConvBnAct(in_chs, mid, 1)
        self.conv_dw = ConvBnAct(mid, mid, 3, stride=stride, groups=mid)
        self.conv_pwl = ConvBnAct(mid, out_chs, 1, apply_act=False)

    def forward(self, x):
        shortcut = x
        x = self.conv_pw(x)
        x = self.conv_dw(x)
        x = self.se(x)
        x = self.conv_pwl(x)
        if self.has_skip:
            x = x + shortcut
        return x


class EfficientNetV2(nn.Layer):
    def __init__(self, num_classes=NUM_CLASSES):
        super().__init__()
        self.conv_stem = ConvBnAct(3, 16, 3, stride=2)
        self.blocks = nn.Sequential(
            nn.Sequential(FusedMBConv(16, 24, 2, 4), FusedMBConv(24, 24, 1, 4)),
            nn.Sequential(MBConv(24, 32, 2, 4), MBConv(32, 32, 1, 4)),
        )
        self.conv_head = ConvBnAct(32, 64, 1)
        self.global_pool = nn.AdaptiveAvgPool2D(1)
        self.classifier = nn.Linear(64, num_classes)

    def forward(self, x):
        x = self.conv_stem(x)
        x = self.blocks(x)
        x = self.conv_head(x)
        x = self.global_pool(x).flatten(1)
        return self.classifier(x)


def _trained_look(m):
    rng = np.random.default_rng(2042)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, n).astype("float32"))
        if isinstance(layer, SqueezeExcite):
            for conv in (layer.conv_reduce, layer.conv_expand):
                conv.bias.set_value(rng.normal(0.0, 0.3, conv.bias.shape).astype("float32"))
    m.classifier.bias.set_value(rng.normal(0.0, 0.1, NUM_CLASSES).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_efficientnetv2 paddle: unknown PADIFF_BUG {bug!r}")
    _BUG["bug"] = bug if bug in OWN_BUGS else ""
    try:
        paddle.seed(0)
        m = EfficientNetV2()
    finally:
        _BUG["bug"] = ""
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(4242)
    return rng.standard_normal((BATCH, 3, 32, 32)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
