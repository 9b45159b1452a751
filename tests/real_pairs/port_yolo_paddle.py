"""Hand-written port, paddle side: a tiny YOLOv5-style detector (written by "person A"), eval mode.
Input [1, 3, 64, 64], 3 classes, 3 anchors per level, 2 detection levels (strides 8 and 16).
Output: the decoded predictions [1, 3 * (8*8 + 4*4), 8] = [1, 240, 8], rows (x, y, w, h, obj,
cls0, cls1, cls2) with x, y, w, h in input pixels.

    backbone.stem    ConvBNLayer 3->8 (3x3 s2)                                   32x32
    backbone.dark2   ConvBNLayer 8->16 (3x3 s2), CSPLayer 16->16 (1 bottleneck)  16x16
    backbone.dark3   ConvBNLayer 16->32 (3x3 s2), CSPLayer 32->32                8x8   -> c4
    backbone.dark4   ConvBNLayer 32->64 (3x3 s2), CSPLayer 64->64, SPPF 64->64   4x4   -> c5
    neck  lateral_conv 1x1 64->32 (p5), nearest x2 upsample, concat [up, c4], csp_p4 64->32
          (no shortcut) -> n4; downsample_conv 3x3 s2 32->32, concat [down, p5], csp_p5 64->64 -> n5
    head  convs.0 / convs.1: 1x1 Conv2D 32->24 / 64->24 (with bias); decode (YOLOv5):
          s = sigmoid(p); xy = (2 s_xy - 0.5 + grid) * stride; wh = (2 s_wh)^2 * anchor; obj, cls = s

Paddle idioms on this side:
- `ConvBNLayer` = `conv` (Conv2D, no bias, padding k // 2) + `bn` (nn.BatchNorm2D with
  momentum=0.97, epsilon=1e-3: the YOLOv5 values in paddle's convention) + `act` (nn.Silu).
- `CSPLayer` (C3) has TWO parallel 1x1 ConvBNLayers on its input, `conv1` (main branch, goes
  through the bottlenecks) and `conv2` (shortcut branch), then `conv3` on concat [main, short].
  Registration: conv1, conv2, conv3, bottlenecks (called conv1, bottlenecks, conv2, conv3).
- `SPPF`: `conv1`, one nn.MaxPool2D(5, 1, 2) module `pool` CALLED THREE TIMES, concat
  [x, y1, y2, y3], `conv2`.
- the neck upsamples with F.interpolate(scale_factor=2, mode="nearest") inline.
- `head` keeps the anchors (pixels) as a non-persistable buffer [2, 3, 2]; the grid is built per
  level inline with paddle.meshgrid (ij) as [ny * nx, 2] (x, y) rows; predictions are reshaped
  [b, na, no, ny * nx] and transposed to [b, na, ny * nx, no].
- BatchNorm statistics and affine parameters and all biases are given random values (fixed numpy
  rng) so that a wrongly ported one shows.

PADIFF_BUG=paddle_grid_yx plants this side's bug (see port_yolo_truth.json): the grid is stacked
as (y, x) instead of (x, y), so the x offset of a cell gets its row index. The torch side's bug
names are accepted and ignored; any other name raises ValueError.
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IMG, NC, NA = 64, 3, 3
NO = NC + 5
STRIDES = (8, 16)
ANCHORS = ((10.0, 13.0), (16.0, 30.0), (33.0, 23.0)), ((30.0, 61.0), (62.0, 45.0), (59.0, 119.0))

PADDLE_BUGS = ("paddle_grid_yx",)
TORCH_BUGS = ("torch_bn_default_eps", "torch_neck_concat_order")


class ConvBNLayer(nn.Layer):
    def __init__(self, ch_in, ch_out, filter_size=1, stride=1):
        super().__init__()
        self.conv = nn.Conv2D(ch_in, ch_out, filter_size, stride, padding=filter_size // 2, bias_attr=False)
        self.bn = nn.BatchNorm2D(ch_out, momentum=0.97, epsilon=1e-3)
        self.act = nn.Silu()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class BottleNeck(nn.Layer):
    def __init__(self, ch, shortcut=True):
        super().__init__()
        self.conv1 = ConvBNLayer(ch, ch, 1)
        self.conv2 = ConvBNLayer(ch, ch, 3)
        self.shortcut = shortcut

    def forward(self, x):
        y = self.conv2(self.conv1(x))
        return x + y if self.shortcut else y


class CSPLayer(nn.Layer):
    def __init__(self, ch_in, ch_out, n=1, shortcut=True):
        super().__init__()
        ch_mid = ch_out // 2
        self.conv1 = ConvBNLayer(ch_in, ch_mid, 1)
        self.conv2 = ConvBNLayer(ch_in, ch_mid, 1)
        self.conv3 = ConvBNLayer(2 * ch_mid, ch_out, 1)
        self.bottlenecks = nn.Sequential(*[BottleNeck(ch_mid, shortcut) for _ in range(n)])

    def forward(self, x):
        main = self.bottlenecks(self.conv1(x))
        short = self.conv2(x)
        return self.conv3(paddle.concat([main, short], axis=1))


class SPPF(nn.Layer):
    def __init__(self, ch_in, ch_out, k=5):
        super().__init__()
        ch_mid = ch_in // 2
        self.conv1 = ConvBNLayer(ch_in, ch_mid, 1)
        self.pool = nn.MaxPool2D(k, stride=1, padding=k // 2)
        self.conv2 = ConvBNLayer(4 * ch_mid, ch_out, 1)

    def forward(self, x):
        x = self.conv1(x)
        y1 = self.pool(x)
        y2 = self.pool(y1)
        y3 = self.pool(y2)
        return self.conv2(paddle.concat([x, y1, y2, y3], axis=1))


class CSPDarknet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = ConvBNLayer(3, 8, 3, 2)
        self.dark2 = nn.Sequential(ConvBNLayer(8, 16, 3, 2), CSPLayer(16, 16))
        self.dark3 = nn.Sequential(ConvBNLayer(16, 32, 3, 2), CSPLayer(32, 32))
        self.dark4 = nn.Sequential(ConvBNLayer(32, 64, 3, 2), CSPLayer(64, 64), SPPF(64, 64))

    def forward(self, x):
        c4 = self.dark3(self.dark2(self.stem(x)))
        c5 = self.dark4(c4)
        return c4, c5


class YOLOv5Neck(nn.Layer):
    def __init__(self):
        super().__init__()
        self.lateral_conv = ConvBNLayer(64, 32, 1)
        self.csp_p4 = CSPLayer(64, 32, shortcut=False)
        self.downsample_conv = ConvBNLayer(32, 32, 3, 2)
        self.csp_p5 = CSPLayer(64, 64, shortcut=False)

    def forward(self, feats):
        c4, c5 = feats
        p5 = self.lateral_conv(c5)
        up = F.interpolate(p5, scale_factor=2, mode="nearest")
        n4 = self.csp_p4(paddle.concat([up, c4], axis=1))
        n5 = self.csp_p5(paddle.concat([self.downsample_conv(n4), p5], axis=1))
        return n4, n5


class YOLOv5Head(nn.Layer):
    def __init__(self, in_channels=(32, 64), grid_yx=False):
        super().__init__()
        self.grid_yx = grid_yx
        self.convs = nn.LayerList([nn.Conv2D(c, NA * NO, 1) for c in in_channels])
        self.register_buffer("anchors", paddle.to_tensor(np.array(ANCHORS, dtype="float32")), persistable=False)

    def forward(self, feats):
        outs = []
        for i, (x, conv) in enumerate(zip(feats, self.convs)):
            p = conv(x)
            b, _, ny, nx = p.shape
            p = F.sigmoid(p.reshape([b, NA, NO, ny * nx]).transpose([0, 1, 3, 2]))  # [b, na, hw, no]
            yv, xv = paddle.meshgrid(paddle.arange(ny, dtype="float32"), paddle.arange(nx, dtype="float32"))
            if self.grid_yx:
                grid = paddle.stack([yv.flatten(), xv.flatten()], axis=-1)  # [hw, 2]
            else:
                grid = paddle.stack([xv.flatten(), yv.flatten()], axis=-1)  # [hw, 2]
            xy = (p[..., 0:2] * 2.0 - 0.5 + grid) * STRIDES[i]
            wh = (p[..., 2:4] * 2.0) ** 2 * self.anchors[i].unsqueeze(1)  # [na, 1, 2]
            outs.append(paddle.concat([xy, wh, p[..., 4:]], axis=-1).reshape([b, -1, NO]))
        return paddle.concat(outs, axis=1)


class YOLOv5(nn.Layer):
    def __init__(self, grid_yx=False):
        super().__init__()
        self.backbone = CSPDarknet()
        self.neck = YOLOv5Neck()
        self.head = YOLOv5Head(grid_yx=grid_yx)

    def forward(self, x):
        return self.head(self.neck(self.backbone(x)))


def _perturb(m):
    rng = np.random.default_rng(17)
    for layer in m.sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            layer.weight.set_value(rng.normal(1.0, 0.1, layer.weight.shape).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, layer._mean.shape).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 1.5, layer._variance.shape).astype("float32"))
        elif isinstance(layer, nn.Conv2D) and layer.bias is not None:
            layer.bias.set_value(rng.normal(0.0, 0.3, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in PADDLE_BUGS + TORCH_BUGS:
        raise ValueError(f"port_yolo paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = YOLOv5(grid_yx=bug == "paddle_grid_yx")
    _perturb(m)
    m.eval()
    return m


def _image():
    return np.random.default_rng(23).uniform(0.0, 1.0, (1, 3, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # decoded predictions [1, 240, 8] (pixels for x, y, w, h): scale down before squaring
    return ((output / 64.0) ** 2).mean()
