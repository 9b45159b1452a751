"""Hand-written port, paddle side: an EfficientDet-style BiFPN neck over P3 / P4 / P5 (written by "person A").

Inputs: three feature maps P3 [2, 16, 16, 16], P4 [2, 16, 8, 8], P5 [2, 16, 4, 4] (positional,
NCHW, numpy rng seed 5, standard normal). Two stacked BiFPN layers with 16 channels, then one
shared 1x1 box head (16 -> 4) applied to each output level; the three [B, 4, H, W] maps are
flattened to [B, H*W, 4] and concatenated: the output is [2, 336, 4].

One BiFPN layer (fast normalised fusion, w = relu(w) / (sum(relu(w)) + 1e-4)):
  top-down   P4_td  = conv(fuse(P4, up2(P5)))
             P3_out = conv(fuse(P3, up2(P4_td)))
  bottom-up  P4_out = conv(fuse(P4, P4_td, down(P3_out)))
             P5_out = conv(fuse(P5, down(P4_out)))
conv = separable conv block: swish -> depthwise 3x3 (no bias) -> pointwise 1x1 (bias) -> BN
(eps 1e-3); up2 = nearest x2; down = max-pool 3x3 stride 2 with TF 'SAME' padding (0 before,
1 after on the even sizes here; the padded cells never win the max).

Paddle idioms on this side:
- root `BiFPNNeck`: `bifpn_layers` = LayerList of `BiFPNLayer` (iterated, never called), and
  `box_head` nn.Conv2D(16, 4, 1, data_format="NCHW"), called once per level.
- `BiFPNLayer` registers its four conv blocks (`conv_p4_td`, `conv_p3_out`, `conv_p4_out`,
  `conv_p5_out`), then the pools `down_p3`, `down_p4` = nn.MaxPool2D(3, 2, padding="SAME"), then
  ONE fusion-weight parameter PER NODE (create_parameter): `w_p4_td` [2], `w_p3_out` [2],
  `w_p4_out` [3], `w_p5_out` [2]. The fusion is a helper method (`_fuse`) inline in the forward;
  upsampling is F.interpolate(scale_factor=2, mode="nearest") inline (no module).
- `SepConvBlock`: `depthwise` Conv2D(16, 16, 3, padding=1, groups=16, bias_attr=False),
  `pointwise` Conv2D(16, 16, 1), `bn` BatchNorm2D(16, momentum=0.99, epsilon=1e-3); the swish is
  F.swish inline at the start of the forward.
- model() gives the BN layers trained-looking affine weights / running statistics and the fusion
  weights trained-looking positive values (seeded), so that nothing is an identity.

The torch side (port_bifpn_torch.py) was written independently (zylo117 EfficientDet style): an
nn.Sequential of BiFPN cells taking a tuple, nn.Upsample modules, a static-same-padding max-pool
module, an nn.SiLU module inside each separable block, and ONE fusion-weight tensor PER PATH.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_fuse_no_norm -> `_fuse` applies relu to the weights but forgets to divide by their sum
                         (+ eps), in every node of every layer
  paddle_p5_relu      -> the P5 output node's separable block is built with act="relu" (the
                         others keep swish)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

C, HEAD_OUT, N_LAYERS = 16, 4, 2
FUSE_EPS, BN_EPS = 1e-4, 1e-3
BATCH = 2
OWN_BUGS = {"paddle_fuse_no_norm", "paddle_p5_relu"}
OTHER_BUGS = {"torch_pool_zero_pad", "torch_td_uses_p4_in"}


class SepConvBlock(nn.Layer):
    def __init__(self, channels, act="swish"):
        super().__init__()
        self.act = act
        self.depthwise = nn.Conv2D(channels, channels, 3, padding=1, groups=channels, bias_attr=False,
                                   data_format="NCHW")
        self.pointwise = nn.Conv2D(channels, channels, 1, data_format="NCHW")
        self.bn = nn.BatchNorm2D(channels, momentum=0.99, epsilon=BN_EPS, data_format="NCHW")

    def forward(self, x):
        x = F.swish(x) if self.act == "swish" else F.relu(x)
        return self.bn(self.pointwise(self.depthwise(x)))


class BiFPNLayer(nn.Layer):
    def __init__(self, channels, no_norm=False, p5_act="swish"):
        super().__init__()
        self.no_norm = no_norm
        self.conv_p4_td = SepConvBlock(channels)
        self.conv_p3_out = SepConvBlock(channels)
        self.conv_p4_out = SepConvBlock(channels)
        self.conv_p5_out = SepConvBlock(channels, act=p5_act)
        self.down_p3 = nn.MaxPool2D(kernel_size=3, stride=2, padding="SAME")
        self.down_p4 = nn.MaxPool2D(kernel_size=3, stride=2, padding="SAME")
        one = nn.initializer.Constant(1.0)
        self.w_p4_td = self.create_parameter([2], default_initializer=one)
        self.w_p3_out = self.create_parameter([2], default_initializer=one)
        self.w_p4_out = self.create_parameter([3], default_initializer=one)
        self.w_p5_out = self.create_parameter([2], default_initializer=one)

    def _fuse(self, weight, feats):
        w = F.relu(weight)
        if not self.no_norm:
            w = w / (paddle.sum(w) + FUSE_EPS)
        out = w[0] * feats[0]
        for i in range(1, len(feats)):
            out = out + w[i] * feats[i]
        return out

    @staticmethod
    def _up(x):
        return F.interpolate(x, scale_factor=2, mode="nearest", data_format="NCHW")

    def forward(self, p3, p4, p5):
        p4_td = self.conv_p4_td(self._fuse(self.w_p4_td, [p4, self._up(p5)]))
        p3_out = self.conv_p3_out(self._fuse(self.w_p3_out, [p3, self._up(p4_td)]))
        p4_out = self.conv_p4_out(self._fuse(self.w_p4_out, [p4, p4_td, self.down_p3(p3_out)]))
        p5_out = self.conv_p5_out(self._fuse(self.w_p5_out, [p5, self.down_p4(p4_out)]))
        return p3_out, p4_out, p5_out


class BiFPNNeck(nn.Layer):
    def __init__(self, no_norm=False, p5_act="swish"):
        super().__init__()
        self.bifpn_layers = nn.LayerList([BiFPNLayer(C, no_norm, p5_act) for _ in range(N_LAYERS)])
        self.box_head = nn.Conv2D(C, HEAD_OUT, 1, data_format="NCHW")

    def forward(self, p3, p4, p5):
        feats = (p3, p4, p5)
        for layer in self.bifpn_layers:
            feats = layer(*feats)
        outs = []
        for f in feats:
            y = self.box_head(f)  # [B, 4, H, W]
            outs.append(y.transpose([0, 2, 3, 1]).reshape([y.shape[0], -1, HEAD_OUT]))
        return paddle.concat(outs, axis=1)  # [B, 256 + 64 + 16, 4]


def _trained_look(m):
    rng = np.random.default_rng(17)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            layer.weight.set_value(rng.uniform(0.6, 1.4, C).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, C).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, C).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, C).astype("float32"))
        if isinstance(layer, BiFPNLayer):
            for w in (layer.w_p4_td, layer.w_p3_out, layer.w_p4_out, layer.w_p5_out):
                w.set_value(rng.uniform(0.3, 1.5, w.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_bifpn paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = BiFPNNeck(no_norm=bug == "paddle_fuse_no_norm", p5_act="relu" if bug == "paddle_p5_relu" else "swish")
    _trained_look(m)
    m.eval()
    return m


def _feats():
    rng = np.random.default_rng(5)
    return [rng.standard_normal((BATCH, C, s, s)).astype("float32") for s in (16, 8, 4)]


def inputs():
    return tuple(paddle.to_tensor(a) for a in _feats()), {}


def loss(output):
    # box regressions [2, 336, 4]
    return (output**2).mean()
