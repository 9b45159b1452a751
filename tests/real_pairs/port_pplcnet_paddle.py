"""Hand-written port, paddle side: a tiny PP-LCNet classifier, PaddleClas style (written by "person A").

Input: one image batch x [2, 3, 32, 32] (positional, NCHW, numpy rng seed 11, standard normal).
Output: logits [2, 10].

Network (PaddleClas `PPLCNet`, scaled down; every conv has no bias except the SE convs):
  conv1     ConvBNLayer 3x3 stride 2, 3 -> 8, BN (eps 1e-5), hardswish          -> [2, 8, 16, 16]
  blocks2   DepthwiseSeparable k3 s1  8 -> 16                                     -> 16x16
  blocks3   DepthwiseSeparable k3 s2 16 -> 24, DepthwiseSeparable k3 s1 24 -> 24  -> 8x8
  blocks4   DepthwiseSeparable k5 s2 24 -> 32                                     -> 4x4
  blocks5   DepthwiseSeparable k5 s1 32 -> 32 with SE                             -> 4x4
  blocks6   DepthwiseSeparable k5 s2 32 -> 48 with SE                             -> 2x2
  avg_pool (AdaptiveAvgPool2D(1)) -> last_conv 1x1 48 -> 64 (no bias) -> hardswish -> dropout
  (p=0, identity) -> flatten -> fc Linear(64, 10)
DepthwiseSeparable: dw_conv (ConvBNLayer, groups = channels, padding (k - 1) // 2) -> [se] ->
pw_conv (ConvBNLayer 1x1); no residual. SEModule(c, reduction 4): avg_pool -> conv1 (1x1,
c -> c / 4, bias) -> relu -> conv2 (1x1, c / 4 -> c, bias) -> hardsigmoid (slope 1/6, offset
0.5) -> multiply with the SE input.

Paddle idioms on this side:
- one nn.Sequential per stage, named `blocks2` ... `blocks6` as in PaddleClas;
- `ConvBNLayer` = `conv`, `bn` (nn.BatchNorm2D), `hardswish` (nn.Hardswish module): the BN and
  the activation are two separate modules;
- `SEModule` registers `avg_pool`, `conv1`, `relu`, `conv2`, `hardsigmoid` (all modules) and
  multiplies inline with paddle.multiply;
- the head modules `avg_pool`, `last_conv`, `hardswish`, `dropout`, `flatten`, `fc` sit on the
  root; the Linear weight is [in, out].
- model() gives every BN trained-looking affine weights and running statistics, and the SE /
  fc biases non-zero values (numpy rng seed 23), so that nothing is an identity.

The torch side (port_pplcnet_torch.py) was written independently, timm style (MobileNetV3 /
`lcnet_*`): conv_stem + BatchNormAct2d (BN and activation in ONE module), a two-level
nn.Sequential `blocks`, DepthwiseSeparableConv blocks with conv_dw / bn1 / aa / se / conv_pw /
bn2 / drop_path, a SqueezeExcite class (conv_reduce / act1 / conv_expand / gate, mean inline),
SelectAdaptivePool2d, conv_head / norm_head / act2 / flatten / classifier.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_se_hardsigmoid_slope -> SEModule.forward gates with the legacy fluid hard_sigmoid
                                 defaults, F.hardsigmoid(x, slope=0.2, offset=0.5), inline,
                                 instead of its nn.Hardsigmoid module (slope 1/6)
  paddle_bn_eps               -> ConvBNLayer builds its BatchNorm2D with epsilon=1e-3 instead of
                                 1e-5 (precision-level)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

BATCH, IMG, NUM_CLASSES, CLASS_EXPAND = 2, 32, 10, 64
OWN_BUGS = {"paddle_se_hardsigmoid_slope", "paddle_bn_eps"}
OTHER_BUGS = {"torch_dsa_skip", "torch_head_pool_max"}

# k, in_c, out_c, stride, use_se
NET_CONFIG = {
    "blocks2": [[3, 8, 16, 1, False]],
    "blocks3": [[3, 16, 24, 2, False], [3, 24, 24, 1, False]],
    "blocks4": [[5, 24, 32, 2, False]],
    "blocks5": [[5, 32, 32, 1, True]],
    "blocks6": [[5, 32, 48, 2, True]],
}
STEM = 8

_BUG = {"name": ""}


class ConvBNLayer(nn.Layer):
    def __init__(self, num_channels, filter_size, num_filters, stride, num_groups=1):
        super().__init__()
        self.conv = nn.Conv2D(
            in_channels=num_channels,
            out_channels=num_filters,
            kernel_size=filter_size,
            stride=stride,
            padding=(filter_size - 1) // 2,
            groups=num_groups,
            bias_attr=False,
        )
        eps = 1e-3 if _BUG["name"] == "paddle_bn_eps" else 1e-5
        self.bn = nn.BatchNorm2D(num_filters, epsilon=eps)
        self.hardswish = nn.Hardswish()

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        x = self.hardswish(x)
        return x


class SEModule(nn.Layer):
    def __init__(self, channel, reduction=4):
        super().__init__()
        self.avg_pool = nn.AdaptiveAvgPool2D(1)
        self.conv1 = nn.Conv2D(channel, channel // reduction, kernel_size=1, stride=1, padding=0)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2D(channel // reduction, channel, kernel_size=1, stride=1, padding=0)
        self.hardsigmoid = nn.Hardsigmoid()
        self.legacy_gate = _BUG["name"] == "paddle_se_hardsigmoid_slope"

    def forward(self, x):
        identity = x
        x = self.avg_pool(x)
        x = self.conv1(x)
        x = self.relu(x)
        x = self.conv2(x)
        if self.legacy_gate:
            x = F.hardsigmoid(x, slope=0.2, offset=0.5)
        else:
            x = self.hardsigmoid(x)
        return paddle.multiply(x=identity, y=x)


class DepthwiseSeparable(nn.Layer):
    def __init__(self, num_channels, num_filters, stride, dw_size=3, use_se=False):
        super().__init__()
        self.use_se = use_se
        self.dw_conv = ConvBNLayer(num_channels, dw_size, num_channels, stride, num_groups=num_channels)
        if use_se:
            self.se = SEModule(num_channels)
        self.pw_conv = ConvBNLayer(num_channels, 1, num_filters, 1)

    def forward(self, x):
        x = self.dw_conv(x)
        if self.use_se:
            x = self.se(x)
        x = self.pw_conv(x)
        return x


class PPLCNet(nn.Layer):
    def __init__(self, class_num=NUM_CLASSES, class_expand=CLASS_EXPAND, dropout_prob=0.0):
        super().__init__()
        self.conv1 = ConvBNLayer(3, 3, STEM, 2)
        for name, cfg in NET_CONFIG.items():
            setattr(self, name, nn.Sequential(*[DepthwiseSeparable(i, o, s, k, se) for k, i, o, s, se in cfg]))
        self.avg_pool = nn.AdaptiveAvgPool2D(1)
        self.last_conv = nn.Conv2D(NET_CONFIG["blocks6"][-1][2], class_expand, 1, stride=1, padding=0, bias_attr=False)
        self.hardswish = nn.Hardswish()
        self.dropout = nn.Dropout(p=dropout_prob, mode="downscale_in_infer")
        self.flatten = nn.Flatten(start_axis=1, stop_axis=-1)
        self.fc = nn.Linear(class_expand, class_num)

    def forward(self, x):
        x = self.conv1(x)
        x = self.blocks2(x)
        x = self.blocks3(x)
        x = self.blocks4(x)
        x = self.blocks5(x)
        x = self.blocks6(x)
        x = self.avg_pool(x)
        x = self.last_conv(x)
        x = self.hardswish(x)
        x = self.dropout(x)
        x = self.flatten(x)
        x = self.fc(x)
        return x


def _trained_look(m):
    rng = np.random.default_rng(23)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, c).astype("float32"))
        elif isinstance(layer, (nn.Conv2D, nn.Linear)) and layer.bias is not None:
            layer.bias.set_value(rng.normal(0.0, 0.2, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_pplcnet paddle: unknown PADIFF_BUG {bug!r}")
    _BUG["name"] = bug if bug in OWN_BUGS else ""
    paddle.seed(0)
    m = PPLCNet()
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(11)
    return rng.standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
