"""Hand-written port, paddle side: a tiny ReXNet-style CNN (written by "person A", clovaai rexnetv1 style).

Input: positional `images` [2, 3, 32, 32] (NCHW, numpy rng seed 44, standard normal). Output:
logits [2, 10].

Architecture (shared with port_rexnet_torch.py):
  stem    conv 3x3 stride 2 (3 -> 16, no bias) - BN - swish                 -> [2, 16, 16, 16]
  blocks  linear bottlenecks (in -> out, expansion t, stride, SE):
            b0  16 -> 20, t 1, stride 1, no SE   (partial residual on 16 of 20 channels)
            b1  20 -> 28, t 2, stride 2, SE      (no residual)              -> [2, 28, 8, 8]
            b2  28 -> 36, t 2, stride 1, SE      (partial residual on 28 of 36)
            b3  36 -> 44, t 2, stride 1, SE      (partial residual on 36 of 44)
  final   conv 1x1 (44 -> 64, no bias) - BN - swish - global average pool
  output  dropout (eval: identity) - conv 1x1 (64 -> 10, bias) -> flatten
Linear bottleneck (mid = in * t):
  [1x1 conv-BN-swish in -> mid, only when t != 1] -> depthwise 3x3 conv (stride)-BN
  -> SE (avg pool -> 1x1 conv mid -> mid // 4 -> BN -> ReLU -> 1x1 conv -> mid -> sigmoid -> scale)
  -> ReLU6 -> 1x1 conv-BN (mid -> out, no act)
  -> PARTIAL residual when stride 1 and in <= out: out[:, :in] += x (the block input is added
     to the first `in` channels of the wider output only).
BatchNorm eps 1e-5 everywhere; convs have no bias except the SE convs and the classifier conv.

Paddle idioms on this side (the original clovaai ReXNet layout):
- root `ReXNetV1` registers `features` (one nn.Sequential of EVERYTHING up to the pool: stem
  conv / BN / nn.Swish as features.0-2, the blocks as features.3-6, the final conv / BN / Swish
  as features.7-9, nn.AdaptiveAvgPool2D(1) as features.10) and `output` (nn.Sequential(nn.Dropout,
  nn.Conv2D(64, 10, 1)) - the classifier is a 1x1 CONV, weight [10, 64, 1, 1]).
- `LinearBottleneck` keeps its layers in ONE nn.Sequential `out` (conv, BN, Swish, dw conv, BN,
  SE, ReLU6, conv, BN; the expansion triple is absent when t == 1) and writes the partial
  residual as a CONCAT: concat([out[:, :in] + x, out[:, in:]], axis=1).
- `SE` registers `avg_pool` (nn.AdaptiveAvgPool2D(1)) and `fc` = nn.Sequential(Conv2D, BatchNorm2D,
  ReLU, Conv2D, Sigmoid); forward: x * fc(avg_pool(x)).
- model() gives every BN trained-looking affine weights / running statistics and every bias
  trained-looking values (seeded), so nothing is an identity; the SE's BN (which normalises
  pooled, per-image means) gets the smaller running variances such a BN learns, U(0.05, 0.4).

The torch side (port_rexnet_torch.py) was written independently in timm style: `stem` /
`features` / `head` modules, conv-norm-act modules with named `conv` / `bn` / `act`, an SE with
an inline squeeze and gate, an nn.Linear classifier, and the partial residual as an IN-PLACE slice
add.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_residual_on_last -> the concat adds the block input to the LAST `in` channels of the
                             output (concat([out[:, :out-in], out[:, out-in:] + x])) instead of
                             the first ones, in every partial-residual block
  paddle_exp_hardswish    -> the expansion conv-BN of each bottleneck is followed by
                             nn.Hardswish instead of nn.Swish (the stem / final convs keep swish)
"""
import os

import numpy as np
import paddle
from paddle import nn

STEM_CH, FINAL_CH, NUM_CLASSES, SE_REDUCTION = 16, 64, 10, 4
# (in, out, t, stride, use_se)
BLOCKS = ((16, 20, 1, 1, False), (20, 28, 2, 2, True), (28, 36, 2, 1, True), (36, 44, 2, 1, True))
BATCH = 2
OWN_BUGS = {"paddle_residual_on_last", "paddle_exp_hardswish"}
OTHER_BUGS = {"torch_se_squeeze_h_only", "torch_se_bn_eps"}


def conv_bn_act(out, in_channels, channels, kernel=1, stride=1, pad=0, num_group=1, act=None):
    out.append(nn.Conv2D(in_channels, channels, kernel, stride, pad, groups=num_group, bias_attr=False))
    out.append(nn.BatchNorm2D(channels))
    if act == "swish":
        out.append(nn.Swish())
    elif act == "hardswish":
        out.append(nn.Hardswish())


class SE(nn.Layer):
    def __init__(self, in_channels, channels, reduction=SE_REDUCTION):
        super().__init__()
        self.avg_pool = nn.AdaptiveAvgPool2D(1)
        self.fc = nn.Sequential(
            nn.Conv2D(in_channels, channels // reduction, 1),
            nn.BatchNorm2D(channels // reduction),
            nn.ReLU(),
            nn.Conv2D(channels // reduction, in_channels, 1),
            nn.Sigmoid(),
        )

    def forward(self, x):
        y = self.avg_pool(x)
        y = self.fc(y)
        return x * y


class LinearBottleneck(nn.Layer):
    def __init__(self, in_channels, channels, t, stride, use_se, bug=""):
        super().__init__()
        self.use_shortcut = stride == 1 and in_channels <= channels
        self.in_channels = in_channels
        self.out_channels = channels
        self.residual_on_last = bug == "paddle_residual_on_last"
        out = []
        if t != 1:
            dw_channels = in_channels * t
            conv_bn_act(out, in_channels, dw_channels, act="hardswish" if bug == "paddle_exp_hardswish" else "swish")
        else:
            dw_channels = in_channels
        conv_bn_act(out, dw_channels, dw_channels, kernel=3, stride=stride, pad=1, num_group=dw_channels)
        if use_se:
            out.append(SE(dw_channels, dw_channels))
        out.append(nn.ReLU6())
        conv_bn_act(out, dw_channels, channels)
        self.out = nn.Sequential(*out)

    def forward(self, x):
        out = self.out(x)
        if self.use_shortcut:
            cin = self.in_channels
            if self.residual_on_last:
                k = self.out_channels - cin
                out = paddle.concat([out[:, :k], out[:, k:] + x], axis=1)
            else:
                out = paddle.concat([out[:, :cin] + x, out[:, cin:]], axis=1)
        return out


class ReXNetV1(nn.Layer):
    def __init__(self, bug=""):
        super().__init__()
        features = []
        conv_bn_act(features, 3, STEM_CH, kernel=3, stride=2, pad=1, act="swish")
        for cin, cout, t, s, se in BLOCKS:
            features.append(LinearBottleneck(cin, cout, t, s, se, bug))
        conv_bn_act(features, BLOCKS[-1][1], FINAL_CH, act="swish")
        features.append(nn.AdaptiveAvgPool2D(1))
        self.features = nn.Sequential(*features)
        self.output = nn.Sequential(nn.Dropout(0.2), nn.Conv2D(FINAL_CH, NUM_CLASSES, 1, bias_attr=True))

    def forward(self, images):
        x = self.features(images)
        x = self.output(x)
        return x.flatten(1)


def _trained_look(m):
    rng = np.random.default_rng(23)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, n).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, n).astype("float32"))
        elif isinstance(layer, nn.Conv2D) and layer.bias is not None:
            layer.bias.set_value(rng.normal(0.0, 0.2, layer.bias.shape).astype("float32"))
    for _name, layer in m.named_sublayers():
        if isinstance(layer, SE):
            # the SE's BN sees pooled (per-image mean) features: trained running variances are small
            bn = layer.fc[1]
            bn._variance.set_value(rng.uniform(0.05, 0.4, bn._variance.shape[0]).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_rexnet paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = ReXNetV1(bug if bug in OWN_BUGS else "")
    _trained_look(m)
    m.eval()
    return m


def _images():
    rng = np.random.default_rng(44)
    return rng.standard_normal((BATCH, 3, 32, 32)).astype("float32")


def inputs():
    return (paddle.to_tensor(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
