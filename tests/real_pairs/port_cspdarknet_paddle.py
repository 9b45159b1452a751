"""Hand-written port, paddle side: a tiny CSPDarknet backbone, YOLOX / YOLOv8 style (written by "person A").

Input: one image batch [2, 3, 64, 64] (positional, NCHW, numpy rng seed 44, standard normal).
Output: the three feature levels (stage 1 [2, 16, 16, 16], stage 2 [2, 32, 8, 8], SPP
[2, 64, 4, 4]) flattened per sample and concatenated: [2, 7168].

Network (every conv is conv (no bias) -> BN (eps 1e-3) -> SiLU):
  stem    Focus: space-to-depth of the image (4 pixel phases, 3 -> 12 channels, 32x32), then a
          3x3 conv 12 -> 8
  stage i (i = 0, 1, 2): 3x3 stride-2 conv, then a C2f cross-stage-partial block:
          two 1x1 halves (left = pass-through, right = into the bottleneck chain), n residual
          bottlenecks (two 3x3 convs, x + f(x)) chained on the right half, every intermediate
          kept, concat [left, right, b1, ..., bn], 1x1 fuse conv.
          widths 16 / 32 / 64, bottlenecks n = 1 / 2 / 1
  spp     SPP: 1x1 conv 64 -> 32, three PARALLEL max pools (5, 9, 13; stride 1, same size),
          concat [x, p5, p9, p13], 1x1 conv 128 -> 64 (applied after stage 2)

Paddle idioms on this side (PaddleDetection style):
- root `CSPDarkNet` registers `spp` FIRST, then `stem` (Focus), then `stages` = LayerList of
  three nn.Sequential(ConvBNLayer stride 2, C2fLayer); the flatten / concat of the outputs is
  inline.
- `ConvBNLayer`: `conv` nn.Conv2D (bias_attr=False), `bn` nn.BatchNorm2D(momentum=0.97,
  epsilon=1e-3); the SiLU is inline (F.silu) in its own forward: there is no activation module.
- `Focus`: the four pixel phases are strided slices concatenated in the order
  (even row, even col), (odd row, even col), (even row, odd col), (odd row, odd col), then its
  `conv` ConvBNLayer(12, 8, 3).
- `C2fLayer` registers `conv_right` (the half fed to the chain), `conv_left`, `blocks`
  (LayerList of `BottleNeck`, iterated), `conv_fuse`: TWO separate 1x1 convs where the torch
  side has one packed conv.
- `BottleNeck`: `conv1`, `conv2` (3x3 ConvBNLayer), residual add inline.
- `SPPLayer`: `conv1`, `pools` = LayerList of nn.MaxPool2D(5 / 9 / 13, 1, k // 2), `conv2`.
  The three parallel pools equal the torch side's three CHAINED 5x5 pools exactly.
- model() gives every BN trained-looking affine weights and running statistics (seeded).

The torch side (port_cspdarknet_torch.py) was written independently (ultralytics style): a
6x6 stride-2 stem conv instead of Focus, an indexed ModuleList, a packed `cv1` split by chunk,
an SiLU module, chained SPPF pools.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_focus_phase_order -> Focus concatenates the pixel phases in raster order
                              (even/even, even/odd, odd/even, odd/odd): the two middle phases
                              are swapped against the weights' layout
  paddle_bn_eps_default    -> ConvBNLayer builds its BatchNorm2D with paddle's default
                              epsilon 1e-5 instead of 1e-3 (every conv of the network)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

BATCH, IMG = 2, 64
OWN_BUGS = {"paddle_focus_phase_order", "paddle_bn_eps_default"}
OTHER_BUGS = {"torch_c2f_chunk_swapped", "torch_p5_no_shortcut"}


class ConvBNLayer(nn.Layer):
    bn_epsilon = 1e-3  # set by model()

    def __init__(self, ch_in, ch_out, filter_size=3, stride=1, act="silu"):
        super().__init__()
        self.conv = nn.Conv2D(ch_in, ch_out, filter_size, stride=stride, padding=(filter_size - 1) // 2,
                              bias_attr=False)
        self.bn = nn.BatchNorm2D(ch_out, momentum=0.97, epsilon=ConvBNLayer.bn_epsilon)
        self.act = act

    def forward(self, x):
        y = self.bn(self.conv(x))
        return F.silu(y) if self.act == "silu" else y


class Focus(nn.Layer):
    def __init__(self, ch_in, ch_out, filter_size=3, raster_order=False):
        super().__init__()
        self.raster_order = raster_order
        self.conv = ConvBNLayer(ch_in * 4, ch_out, filter_size)

    def forward(self, x):
        ee = x[:, :, 0::2, 0::2]
        oe = x[:, :, 1::2, 0::2]
        eo = x[:, :, 0::2, 1::2]
        oo = x[:, :, 1::2, 1::2]
        if self.raster_order:
            x = paddle.concat([ee, eo, oe, oo], axis=1)
        else:
            x = paddle.concat([ee, oe, eo, oo], axis=1)
        return self.conv(x)


class BottleNeck(nn.Layer):
    def __init__(self, ch_in, ch_out, shortcut=True):
        super().__init__()
        self.conv1 = ConvBNLayer(ch_in, ch_out, 3)
        self.conv2 = ConvBNLayer(ch_out, ch_out, 3)
        self.shortcut = shortcut and ch_in == ch_out

    def forward(self, x):
        y = self.conv2(self.conv1(x))
        return x + y if self.shortcut else y


class C2fLayer(nn.Layer):
    def __init__(self, ch_in, ch_out, num_blocks=1, shortcut=True):
        super().__init__()
        hidden = ch_out // 2
        self.conv_right = ConvBNLayer(ch_in, hidden, 1)
        self.conv_left = ConvBNLayer(ch_in, hidden, 1)
        self.blocks = nn.LayerList([BottleNeck(hidden, hidden, shortcut) for _ in range(num_blocks)])
        self.conv_fuse = ConvBNLayer((2 + num_blocks) * hidden, ch_out, 1)

    def forward(self, x):
        left = self.conv_left(x)
        right = self.conv_right(x)
        outs = [left, right]
        for block in self.blocks:
            right = block(right)
            outs.append(right)
        return self.conv_fuse(paddle.concat(outs, axis=1))


class SPPLayer(nn.Layer):
    def __init__(self, ch_in, ch_out, pool_sizes=(5, 9, 13)):
        super().__init__()
        hidden = ch_in // 2
        self.conv1 = ConvBNLayer(ch_in, hidden, 1)
        self.pools = nn.LayerList([nn.MaxPool2D(k, stride=1, padding=k // 2) for k in pool_sizes])
        self.conv2 = ConvBNLayer(hidden * (len(pool_sizes) + 1), ch_out, 1)

    def forward(self, x):
        x = self.conv1(x)
        outs = [x] + [pool(x) for pool in self.pools]
        return self.conv2(paddle.concat(outs, axis=1))


class CSPDarkNet(nn.Layer):
    def __init__(self, widths=(16, 32, 64), depths=(1, 2, 1), stem_width=8, raster_focus=False):
        super().__init__()
        self.spp = SPPLayer(widths[-1], widths[-1])
        self.stem = Focus(3, stem_width, 3, raster_order=raster_focus)
        stages, ch = [], stem_width
        for w, n in zip(widths, depths):
            stages.append(nn.Sequential(ConvBNLayer(ch, w, 3, stride=2), C2fLayer(w, w, n, shortcut=True)))
            ch = w
        self.stages = nn.LayerList(stages)

    def forward(self, x):
        x = self.stem(x)
        feats = []
        for i, stage in enumerate(self.stages):
            x = stage(x)
            if i == len(self.stages) - 1:
                x = self.spp(x)
            feats.append(x)
        return paddle.concat([f.flatten(1) for f in feats], axis=1)


def _trained_look(m):
    rng = np.random.default_rng(44)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, c).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_cspdarknet paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    ConvBNLayer.bn_epsilon = 1e-5 if bug == "paddle_bn_eps_default" else 1e-3
    m = CSPDarkNet(raster_focus=bug == "paddle_focus_phase_order")
    _trained_look(m)
    m.eval()
    return m


def _image():
    return np.random.default_rng(44).standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # flattened multi-level features [2, 7168]
    return (output**2).mean()
