"""Hand-written port, paddle side: an FPN neck and a RetinaNet head, tiny (written by "person A", PaddleDetection style).

Inputs: three backbone maps (positional, NCHW, numpy rng seed 29, standard normal)
C3 [2, 8, 16, 16], C4 [2, 16, 8, 8], C5 [2, 16, 4, 4].
FPN (16 channels): lateral 1x1 convs, top-down sum with nearest x2 upsampling, 3x3 output convs
-> P3 / P4 / P5; P6 = 3x3 stride-2 conv on P5 (the FPN output, not C5), P7 = 3x3 stride-2 conv
on relu(P6). Levels 16x16, 8x8, 4x4, 2x2, 1x1.
RetinaNet head (shared over the five levels, 3 anchors, 4 classes): class subnet = 2 x (3x3
conv + ReLU) then a 3x3 conv to A*K = 12 logits (bias prior-probability init, p = 0.01); box
subnet = 2 x (3x3 conv + ReLU) then a 3x3 conv to A*4 = 12 deltas. Per level the maps are
transposed to NHWC and reshaped to [N, H*W*A, K] / [N, H*W*A, 4] (channel = a*K + k), concatenated
over levels, and the class logits and box deltas are concatenated on the last axis:
output [2, 1023, 8] (1023 = (256 + 64 + 16 + 4 + 1) * 3).

Paddle idioms on this side:
- root `RetinaNet`: `neck` (FPN), `head` (RetinaHead).
- `FPN` registers its convs with add_sublayer under PaddleDetection names, interleaved per level:
  `fpn_inner_res3_sum_lateral`, `fpn_res3_sum`, ..., `fpn_inner_res5_sum_lateral`,
  `fpn_res5_sum`, then the extra convs `fpn_6`, `fpn_7` (plain Python lists hold them too). It
  computes ALL laterals first, then the top-down sums in place, then the output convs; the
  relu before P7 is F.relu inline.
- `RetinaHead`: `conv_feat` (`RetinaFeat`: `cls_conv_0`, `reg_conv_0`, `cls_conv_1`,
  `reg_conv_1` added interleaved, F.relu inline, returns (cls_feat, reg_feat) per level), then
  `retina_cls`, `retina_reg`. The head flattens and concatenates the levels itself.
- model() gives every conv trained-looking weights (normal, std sqrt(1 / fan_in), a quarter of that variance for the two predictors; seeded) and biases; the class
  bias keeps its prior-probability init -log((1 - 0.01) / 0.01) = -4.595 plus a small seeded
  jitter.

The torch side (port_retinanet_head_torch.py) was written independently in torchvision style
(FeaturePyramidNetwork inner_blocks / layer_blocks / extra_blocks LastLevelP6P7, RetinaNetHead
with classification_head / regression_head, Conv2dNormActivation-like Sequentials with ReLU
modules, dict outputs).

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_p6_from_c5         -> FPN built with use_c5=True (PaddleDetection's default): P6 is
                               computed from the raw backbone C5 instead of the FPN output P5
  paddle_reg_uses_cls_feat  -> the head's forward feeds the class-subnet features to retina_reg
                               (bbox_reg = retina_reg(conv_cls_feat))
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IN_CHANNELS = (8, 16, 16)
OUT_CHANNELS = 16
NUM_ANCHORS, NUM_CLASSES, STACKED_CONVS = 3, 4, 2
PRIOR_PROB = 0.01
BATCH = 2
OWN_BUGS = {"paddle_p6_from_c5", "paddle_reg_uses_cls_feat"}
OTHER_BUGS = {"torch_topdown_from_output", "torch_cls_class_major"}


class FPN(nn.Layer):
    def __init__(self, in_channels, out_channel, extra_stage=2, use_c5=False, relu_before_extra_convs=True):
        super().__init__()
        self.use_c5 = use_c5
        self.relu_before_extra_convs = relu_before_extra_convs
        self.lateral_convs, self.fpn_convs = [], []
        for i, ch in enumerate(in_channels):
            lvl = i + 3
            lateral = self.add_sublayer(f"fpn_inner_res{lvl}_sum_lateral", nn.Conv2D(ch, out_channel, 1))
            self.lateral_convs.append(lateral)
            fpn_conv = self.add_sublayer(f"fpn_res{lvl}_sum", nn.Conv2D(out_channel, out_channel, 3, padding=1))
            self.fpn_convs.append(fpn_conv)
        for i in range(extra_stage):
            lvl = len(in_channels) + 3 + i
            ch = in_channels[-1] if (i == 0 and use_c5) else out_channel
            extra = self.add_sublayer(f"fpn_{lvl}", nn.Conv2D(ch, out_channel, 3, stride=2, padding=1))
            self.fpn_convs.append(extra)

    def forward(self, body_feats):
        num_levels = len(body_feats)
        laterals = [self.lateral_convs[i](body_feats[i]) for i in range(num_levels)]
        for i in range(1, num_levels):
            lvl = num_levels - i
            upsample = F.interpolate(laterals[lvl], scale_factor=2.0, mode="nearest")
            laterals[lvl - 1] = laterals[lvl - 1] + upsample
        fpn_output = [self.fpn_convs[lvl](laterals[lvl]) for lvl in range(num_levels)]
        extra_source = body_feats[-1] if self.use_c5 else fpn_output[-1]
        fpn_output.append(self.fpn_convs[num_levels](extra_source))
        for i in range(1, len(self.fpn_convs) - num_levels):
            x = F.relu(fpn_output[-1]) if self.relu_before_extra_convs else fpn_output[-1]
            fpn_output.append(self.fpn_convs[num_levels + i](x))
        return fpn_output


class RetinaFeat(nn.Layer):
    def __init__(self, feat_in, feat_out, num_convs):
        super().__init__()
        self.cls_subnet_convs, self.reg_subnet_convs = [], []
        for i in range(num_convs):
            ch_in = feat_in if i == 0 else feat_out
            self.cls_subnet_convs.append(self.add_sublayer(f"cls_conv_{i}", nn.Conv2D(ch_in, feat_out, 3, padding=1)))
            self.reg_subnet_convs.append(self.add_sublayer(f"reg_conv_{i}", nn.Conv2D(ch_in, feat_out, 3, padding=1)))

    def forward(self, fpn_feat):
        cls_feat = fpn_feat
        reg_feat = fpn_feat
        for i in range(len(self.cls_subnet_convs)):
            cls_feat = F.relu(self.cls_subnet_convs[i](cls_feat))
            reg_feat = F.relu(self.reg_subnet_convs[i](reg_feat))
        return cls_feat, reg_feat


class RetinaHead(nn.Layer):
    def __init__(self, in_channels, num_classes, num_anchors, stacked_convs, reg_uses_cls_feat=False):
        super().__init__()
        self.num_classes, self.num_anchors = num_classes, num_anchors
        self.reg_uses_cls_feat = reg_uses_cls_feat
        self.conv_feat = RetinaFeat(in_channels, in_channels, stacked_convs)
        bias_init_value = -math.log((1 - PRIOR_PROB) / PRIOR_PROB)
        self.retina_cls = nn.Conv2D(
            in_channels, num_classes * num_anchors, 3, padding=1,
            weight_attr=paddle.ParamAttr(initializer=nn.initializer.Normal(0.0, 0.01)),
            bias_attr=paddle.ParamAttr(initializer=nn.initializer.Constant(bias_init_value)))
        self.retina_reg = nn.Conv2D(
            in_channels, 4 * num_anchors, 3, padding=1,
            weight_attr=paddle.ParamAttr(initializer=nn.initializer.Normal(0.0, 0.01)),
            bias_attr=paddle.ParamAttr(initializer=nn.initializer.Constant(0.0)))

    def forward(self, neck_feats):
        cls_logits_list, bboxes_reg_list = [], []
        for neck_feat in neck_feats:
            conv_cls_feat, conv_reg_feat = self.conv_feat(neck_feat)
            cls_logits = self.retina_cls(conv_cls_feat)
            bbox_reg = self.retina_reg(conv_cls_feat if self.reg_uses_cls_feat else conv_reg_feat)
            n = cls_logits.shape[0]
            cls_logits_list.append(cls_logits.transpose([0, 2, 3, 1]).reshape([n, -1, self.num_classes]))
            bboxes_reg_list.append(bbox_reg.transpose([0, 2, 3, 1]).reshape([n, -1, 4]))
        return paddle.concat(cls_logits_list, axis=1), paddle.concat(bboxes_reg_list, axis=1)


class RetinaNet(nn.Layer):
    def __init__(self, use_c5=False, reg_uses_cls_feat=False):
        super().__init__()
        self.neck = FPN(IN_CHANNELS, OUT_CHANNELS, extra_stage=2, use_c5=use_c5)
        self.head = RetinaHead(OUT_CHANNELS, NUM_CLASSES, NUM_ANCHORS, STACKED_CONVS, reg_uses_cls_feat)

    def forward(self, c3, c4, c5):
        cls_logits, bbox_reg = self.head(self.neck([c3, c4, c5]))
        return paddle.concat([cls_logits, bbox_reg], axis=-1)  # [N, 1023, K + 4]


def _trained_look(m):
    rng = np.random.default_rng(31)
    for name, layer in m.named_sublayers():
        if isinstance(layer, nn.Conv2D):
            fan_in = int(np.prod(layer.weight.shape[1:]))
            gain = 0.25 if name.endswith(("retina_cls", "retina_reg")) else 1.0
            layer.weight.set_value(rng.normal(0.0, math.sqrt(gain / fan_in), layer.weight.shape).astype("float32"))
            jitter = rng.normal(0.0, 0.1, layer.bias.shape).astype("float32")
            layer.bias.set_value(layer.bias.numpy() + jitter)  # class bias: prior init + jitter


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_retinanet_head paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = RetinaNet(use_c5=bug == "paddle_p6_from_c5", reg_uses_cls_feat=bug == "paddle_reg_uses_cls_feat")
    _trained_look(m)
    m.eval()
    return m


def _feats():
    rng = np.random.default_rng(29)
    return [rng.standard_normal((BATCH, c, s, s)).astype("float32") for c, s in zip(IN_CHANNELS, (16, 8, 4))]


def inputs():
    return tuple(paddle.to_tensor(a) for a in _feats()), {}


def loss(output):
    # class logits | box deltas [2, 1023, 8]
    return (output**2).mean()
