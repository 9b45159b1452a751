"""Hand-written port, paddle side: a tiny Res2Net-vd style CNN (written by "person A", PaddleClas style).

Input: one image batch [2, 3, 16, 16] (positional, NCHW, numpy rng seed 42, standard normal).
Output: logits [2, 10]. Eval mode: every BatchNorm uses its (trained-looking) running statistics.

Network:
  stem    3x3 conv 3 -> 16, BN, ReLU                                   [2, 16, 16, 16]
  res2a   Res2Net bottleneck 16 -> 32, width 4 x scale 4, stride 1, first block of its stage
  res2b   Res2Net bottleneck 32 -> 32, width 4 x scale 4                [2, 32, 16, 16]
  res3a   Res2Net bottleneck 32 -> 64, width 8 x scale 4, stride 2, first block of its stage
  res3b   Res2Net bottleneck 64 -> 64, width 8 x scale 4                [2, 64, 8, 8]
  global average pool, Linear(64, 10)

One Res2Net bottleneck (BN eps 1e-5 everywhere):
  y = relu(BN(conv1x1(x)))                     in -> width * scale channels
  split y into `scale` groups x_1..x_4 of `width` channels
  first block of a stage ("stage" type): y_i = relu(BN(conv3x3_i(x_i), stride)) for i = 1..3
                                         y_4 = avg_pool(x_4, 3, stride, padding 1, pad cells COUNTED)
  other blocks ("normal" type):          y_1 = relu(BN(conv3x3_1(x_1)))
                                         y_i = relu(BN(conv3x3_i(x_i + y_{i-1}))) for i = 2, 3
                                         y_4 = x_4 (passed through)
  out = BN(conv1x1(concat(y_1..y_4)))          width * scale -> out channels
  shortcut: identity, or (stride 1) BN(conv1x1(x)), or (stride 2, "vd") BN(conv1x1(avg_pool 2x2(x)))
  return relu(out + shortcut)

Paddle idioms on this side:
- root `Res2NetVd`: `conv1_1` (the stem, a ConvBNLayer), then the blocks added with
  add_sublayer under PaddleClas names `res2a`, `res2b`, `res3a`, `res3b` (kept in a plain python
  list `block_list` too, which is iterated), `pool2d_avg` nn.AdaptiveAvgPool2D(1), `out`
  nn.Linear(64, 10) (weight [in, out]).
- `ConvBNLayer` = ONE module for conv + BN (+ inline F.relu): `_pool2d_avg` (the vd 2x2 average
  pool, AvgPool2D(2, 2, ceil_mode=True), used only when is_vd_mode), `_conv` (bias_attr=False),
  `_batch_norm` BatchNorm2D.
- `BottleneckBlock`: `conv0` (1x1), `conv1` = a LayerList of the scale - 1 per-split 3x3
  ConvBNLayers, `conv2` (1x1, no act), and `short` (only when the shape changes). The split,
  the hierarchical additions, the last-split pooling (F.avg_pool2d inline, exclusive=False) and
  the residual add + F.relu are inline in the block's forward. The block type is an explicit
  `is_first` flag (not derived from the stride).

The torch side (port_res2net_torch.py) was written independently (official Res2Net style):
separate conv / bn modules, a torch-only wrapper module for the split path (one GROUPED conv for
the stage-type blocks, ModuleLists `convs` / `bns` for the normal ones), an nn.AvgPool2d module
for the last split, nn.ReLU(inplace=True) modules and nn.Sequential downsample shortcuts.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_pool_exclusive -> the stage-type block's last-split F.avg_pool2d forgets
                           exclusive=False (paddle's default excludes the pad cells from the
                           divisor, torch's AvgPool2d counts them): border cells change
  paddle_short_no_pool  -> the stride-2 block's shortcut is built as a plain strided 1x1
                           ConvBNLayer (stride 2, is_vd_mode=False) instead of the vd form
                           (2x2 average pool, then a stride-1 1x1 conv)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

NUM_CLASSES = 10
BATCH = 2
OWN_BUGS = {"paddle_pool_exclusive", "paddle_short_no_pool"}
OTHER_BUGS = {"torch_no_hierarchy", "torch_bn3_eps"}


class ConvBNLayer(nn.Layer):
    def __init__(self, num_channels, num_filters, filter_size, stride=1, groups=1, is_vd_mode=False, act=None):
        super().__init__()
        self.is_vd_mode = is_vd_mode
        self.act = act
        self._pool2d_avg = nn.AvgPool2D(kernel_size=2, stride=2, padding=0, ceil_mode=True)
        self._conv = nn.Conv2D(num_channels, num_filters, filter_size, stride=stride,
                               padding=(filter_size - 1) // 2, groups=groups, bias_attr=False)
        self._batch_norm = nn.BatchNorm2D(num_filters, epsilon=1e-5)

    def forward(self, inputs):
        if self.is_vd_mode:
            inputs = self._pool2d_avg(inputs)
        y = self._batch_norm(self._conv(inputs))
        if self.act == "relu":
            y = F.relu(y)
        return y


class BottleneckBlock(nn.Layer):
    def __init__(self, num_channels1, num_channels2, num_filters, stride, scales, shortcut, is_first,
                 bug=""):
        super().__init__()
        self.stride = stride
        self.scales = scales
        self.is_first = is_first
        self.shortcut = shortcut
        self.pool_exclusive = bug == "paddle_pool_exclusive"
        width = num_filters // scales
        self.conv0 = ConvBNLayer(num_channels1, num_filters, 1, act="relu")
        self.conv1 = nn.LayerList(
            [ConvBNLayer(width, width, 3, stride=stride, act="relu") for _ in range(scales - 1)])
        self.conv2 = ConvBNLayer(num_filters, num_channels2, 1, act=None)
        if not shortcut:
            if stride == 2 and bug == "paddle_short_no_pool":
                self.short = ConvBNLayer(num_channels1, num_channels2, 1, stride=2, is_vd_mode=False)
            else:
                self.short = ConvBNLayer(num_channels1, num_channels2, 1, stride=1, is_vd_mode=stride == 2)

    def forward(self, inputs):
        y = self.conv0(inputs)
        xs = paddle.split(y, self.scales, axis=1)
        ys = []
        for s, conv1 in enumerate(self.conv1):
            if s == 0 or self.is_first:
                ys.append(conv1(xs[s]))
            else:
                ys.append(conv1(xs[s] + ys[-1]))
        if self.is_first:
            if self.pool_exclusive:
                ys.append(F.avg_pool2d(xs[-1], kernel_size=3, stride=self.stride, padding=1))
            else:
                ys.append(F.avg_pool2d(xs[-1], kernel_size=3, stride=self.stride, padding=1, exclusive=False))
        else:
            ys.append(xs[-1])
        conv1 = paddle.concat(ys, axis=1)
        conv2 = self.conv2(conv1)
        short = inputs if self.shortcut else self.short(inputs)
        y = paddle.add(x=short, y=conv2)
        return F.relu(y)


# name, in channels, out channels, bottleneck channels (width * scale), stride, first of its stage
BLOCKS = [
    ("res2a", 16, 32, 16, 1, True),
    ("res2b", 32, 32, 16, 1, False),
    ("res3a", 32, 64, 32, 2, True),
    ("res3b", 64, 64, 32, 1, False),
]


class Res2NetVd(nn.Layer):
    def __init__(self, scales=4, class_num=NUM_CLASSES, bug=""):
        super().__init__()
        self.conv1_1 = ConvBNLayer(3, 16, 3, act="relu")
        self.block_list = []
        for name, cin, cout, filters, stride, first in BLOCKS:
            block = self.add_sublayer(
                name, BottleneckBlock(cin, cout, filters, stride, scales, shortcut=cin == cout and stride == 1,
                                      is_first=first, bug=bug))
            self.block_list.append(block)
        self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        self.out = nn.Linear(64, class_num)

    def forward(self, inputs):
        y = self.conv1_1(inputs)
        for block in self.block_list:
            y = block(y)
        y = self.pool2d_avg(y)
        y = paddle.flatten(y, start_axis=1)
        return self.out(y)


def _trained_look(m):
    rng = np.random.default_rng(1042)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, n).astype("float32"))
    m.out.weight.set_value(rng.normal(0.0, 0.04, (64, NUM_CLASSES)).astype("float32"))
    m.out.bias.set_value(rng.normal(0.0, 0.1, NUM_CLASSES).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_res2net paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = Res2NetVd(bug=bug if bug in OWN_BUGS else "")
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(42)
    return rng.standard_normal((BATCH, 3, 16, 16)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
