"""Hand-written port, paddle side: a tiny ResNeSt (split-attention network) classifier (written by "person A").

Input: one image batch `images` [2, 3, 16, 16] (positional, NCHW, numpy rng seed 35, standard
normal). Output: class logits [2, 10].

Network: stem 3x3 conv (3 -> 16) + BN + ReLU, then two ResNeSt bottleneck blocks, then global
average pooling and a Linear(64, 10) classifier.
  block 1: 16 -> 32 channels, group width 16, stride 1; shortcut = 1x1 conv + BN (no pooling)
  block 2: 32 -> 64 channels, group width 32, stride 2; "avd": the 3x3 average pool (stride 2,
           padding 1, padded cells COUNTED, like torch's count_include_pad=True) after the split
           attention; shortcut = "avg down": 2x2 average pool (stride 2, ceil mode, padding
           excluded) -> 1x1 conv -> BN
Bottleneck: 1x1 reduce conv + BN + ReLU -> split-attention conv -> [avd pool] -> 1x1 expand conv
+ BN; out = relu(expand + shortcut).

Split-attention conv (radix R = 2, cardinality K = 2, width C): ONE 3x3 conv producing R*C
channels with groups = K*R (no bias) + BN + ReLU; the R*C channels are split radix-major, R splits
of C channels, each split made of K cardinal groups of C/K channels. gap = mean over H, W of the
sum of the splits -> [B, C]; attention = fc1 (grouped by K, C -> 16, bias) -> BN -> ReLU -> fc2
(grouped by K, 16 -> R*C, bias); within each cardinal group the fc2 outputs are laid out
(radix, C/K), and a softmax over the radix axis gives the split weights ("rSoftMax");
out = sum_r a_r * split_r.

Paddle idioms on this side (PaddleClas-like, but "person A" wrote the attention as linear maps):
- root `ResNeStTiny`: `stem` (ConvBNAct), `blocks` LayerList of two `BottleneckBlock` (iterated,
  never called), `fc` nn.Linear(64, 10); the global average pool is an inline mean.
- `ConvBNAct`: `conv` nn.Conv2D(bias_attr=False), `bn` nn.BatchNorm2D; the ReLU is inline.
- `BottleneckBlock` registers `shortcut` FIRST (a `ShortcutDown`: optional `pool` nn.AvgPool2D
  then `proj` ConvBNAct), then `reduce`, `split_attn`, `avd` (nn.AvgPool2D, block 2 only),
  `expand`; final add + ReLU inline.
- `SplitAttnConv`: `radix_conv` ConvBNAct (groups = K*R) and `attention` (`RadixAttention`).
  The splits are taken by ONE reshape to [B, R, C, H, W] (not paddle.split); the weighted sum is a
  multiply + sum over axis 1.
- `RadixAttention` takes gap [B, C] as a 2-D tensor: `fc_reduce` and `fc_expand` are
  `GroupLinear` layers (weight [K, in/K, out/K], bias [K, out/K], computed with paddle.einsum per
  cardinal group), `norm` is nn.BatchNorm1D; ReLU inline; the radix softmax is INLINE: reshape to
  [B, K, R, C/K], F.softmax(axis=2), transpose to [B, R, K, C/K], reshape [B, R, C].
- model() gives every BN trained-looking affine weights and running statistics (running variances
  U(0.5, 2.0), except the attention's BatchNorm1D: U(0.05, 0.3), as the small pooled fc1 outputs
  of a trained net have) and the GroupLinear layers seeded values (rng seed 3535).

The torch side (port_resnest_torch.py) was written independently in the style of the original
zhanghang1989 ResNeSt code (SplAtConv2d with 1x1 grouped convs fc1 / fc2 and an rSoftMax module).

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_avd_exclusive  -> block 2's avd pool is built as nn.AvgPool2D(3, 2, padding=1) with
                           paddle's default exclusive=True, so border windows divide by the
                           number of real cells (6 or 4) instead of 9
  paddle_attn_bn_eps    -> RadixAttention's BatchNorm1D is built with epsilon=1e-3 (a Keras
                           default) instead of 1e-5, in both blocks (precision-level)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

RADIX, CARDINALITY = 2, 2
ATTN_MIN, REDUCTION = 16, 4
NUM_CLASSES = 10
BATCH, SIZE = 2, 16
OWN_BUGS = {"paddle_avd_exclusive", "paddle_attn_bn_eps"}
OTHER_BUGS = {"torch_rsoftmax_no_transpose", "torch_avd_first"}


class ConvBNAct(nn.Layer):
    def __init__(self, cin, cout, k, stride=1, groups=1, act=True):
        super().__init__()
        self.act = act
        self.conv = nn.Conv2D(cin, cout, k, stride=stride, padding=k // 2, groups=groups, bias_attr=False,
                              data_format="NCHW")
        self.bn = nn.BatchNorm2D(cout, data_format="NCHW")

    def forward(self, x):
        x = self.bn(self.conv(x))
        return F.relu(x) if self.act else x


class GroupLinear(nn.Layer):
    """Block-diagonal linear map: the input's K groups are mapped independently."""

    def __init__(self, in_features, out_features, groups):
        super().__init__()
        self.groups = groups
        self.weight = self.create_parameter([groups, in_features // groups, out_features // groups])
        self.bias = self.create_parameter([groups, out_features // groups], is_bias=True)

    def forward(self, x):
        b = x.shape[0]
        x = x.reshape([b, self.groups, -1])
        y = paddle.einsum("bgi,gio->bgo", x, self.weight) + self.bias
        return y.reshape([b, -1])


class RadixAttention(nn.Layer):
    def __init__(self, channels, inter, radix, cardinality, bn_eps=1e-5):
        super().__init__()
        self.radix, self.cardinality, self.channels = radix, cardinality, channels
        self.fc_reduce = GroupLinear(channels, inter, cardinality)
        self.norm = nn.BatchNorm1D(inter, epsilon=bn_eps)
        self.fc_expand = GroupLinear(inter, channels * radix, cardinality)

    def forward(self, gap):
        b = gap.shape[0]
        a = self.fc_expand(F.relu(self.norm(self.fc_reduce(gap))))
        a = a.reshape([b, self.cardinality, self.radix, -1])
        a = F.softmax(a, axis=2)
        a = a.transpose([0, 2, 1, 3])
        return a.reshape([b, self.radix, self.channels])


class SplitAttnConv(nn.Layer):
    def __init__(self, channels, radix, cardinality, bn_eps=1e-5):
        super().__init__()
        self.radix, self.channels = radix, channels
        inter = max(channels * radix // REDUCTION, ATTN_MIN)
        self.radix_conv = ConvBNAct(channels, channels * radix, 3, groups=cardinality * radix)
        self.attention = RadixAttention(channels, inter, radix, cardinality, bn_eps)

    def forward(self, x):
        y = self.radix_conv(x)
        b, _, h, w = y.shape
        splits = y.reshape([b, self.radix, self.channels, h, w])
        gap = splits.sum(axis=1).mean(axis=[2, 3])
        a = self.attention(gap)
        return (splits * a.unsqueeze(-1).unsqueeze(-1)).sum(axis=1)


class ShortcutDown(nn.Layer):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.pool = nn.AvgPool2D(stride, stride, ceil_mode=True, exclusive=True) if stride > 1 else None
        self.proj = ConvBNAct(cin, cout, 1, act=False)

    def forward(self, x):
        if self.pool is not None:
            x = self.pool(x)
        return self.proj(x)


class BottleneckBlock(nn.Layer):
    def __init__(self, cin, width, cout, stride, bug=""):
        super().__init__()
        self.shortcut = ShortcutDown(cin, cout, stride) if (stride > 1 or cin != cout) else None
        self.reduce = ConvBNAct(cin, width, 1)
        self.split_attn = SplitAttnConv(width, RADIX, CARDINALITY,
                                        bn_eps=1e-3 if bug == "paddle_attn_bn_eps" else 1e-5)
        if stride > 1:
            exclusive = bug == "paddle_avd_exclusive"
            self.avd = nn.AvgPool2D(3, stride, padding=1, exclusive=exclusive)
        else:
            self.avd = None
        self.expand = ConvBNAct(width, cout, 1, act=False)

    def forward(self, x):
        y = self.split_attn(self.reduce(x))
        if self.avd is not None:
            y = self.avd(y)
        y = self.expand(y)
        short = x if self.shortcut is None else self.shortcut(x)
        return F.relu(y + short)


class ResNeStTiny(nn.Layer):
    def __init__(self, bug=""):
        super().__init__()
        self.stem = ConvBNAct(3, 16, 3)
        self.blocks = nn.LayerList([
            BottleneckBlock(16, 16, 32, 1, bug),
            BottleneckBlock(32, 32, 64, 2, bug),
        ])
        self.fc = nn.Linear(64, NUM_CLASSES)

    def forward(self, images):
        x = self.stem(images)
        for blk in self.blocks:
            x = blk(x)
        return self.fc(x.mean(axis=[2, 3]))


def _trained_look(m):
    rng = np.random.default_rng(3535)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, (nn.BatchNorm2D, nn.BatchNorm1D)):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, n).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            lo, hi = (0.05, 0.3) if isinstance(layer, nn.BatchNorm1D) else (0.5, 2.0)
            layer._variance.set_value(rng.uniform(lo, hi, n).astype("float32"))
        if isinstance(layer, GroupLinear):
            fan_in = layer.weight.shape[1]
            layer.weight.set_value(rng.normal(0.0, 1.0 / np.sqrt(fan_in), layer.weight.shape).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_resnest paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = ResNeStTiny(bug if bug in OWN_BUGS else "")
    _trained_look(m)
    m.eval()
    return m


def _images():
    rng = np.random.default_rng(35)
    return rng.standard_normal((BATCH, 3, SIZE, SIZE)).astype("float32")


def inputs():
    return (paddle.to_tensor(_images()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()
