"""Hand-written port, paddle side: a tiny DeepLabV3 segmentation model with an ASPP head (written by "person A").

Input: one image batch x [2, 3, 32, 32] (positional, NCHW, numpy rng seed 31, standard normal).
Output: a list with ONE tensor, the class logits upsampled back to the input size, [2, 5, 32, 32]
(PaddleSeg style: models return a list of logits).

Architecture (BN eps 1e-3 everywhere, the model was converted from a Keras checkpoint):
  backbone  3 x ConvBNReLU 3x3: 3 -> 8 (stride 2), 8 -> 16 (stride 2), 16 -> 16 (stride 1)
            -> feature map [2, 16, 8, 8] (output stride 4)
  ASPP      four branches of 12 channels on the feature map, concatenated in the order
              1x1 ConvBNReLU | 3x3 ConvBNReLU dilation 2 | 3x3 ConvBNReLU dilation 3 |
              image pooling (global average pool -> 1x1 ConvBNReLU -> bilinear back to 8 x 8)
            -> 1x1 ConvBNReLU projection 48 -> 12 -> dropout (identity in eval)
  head      3x3 ConvBNReLU 12 -> 12, 1x1 classifier conv 12 -> 5 (with bias),
            bilinear x4 upsample (align_corners=False) to [2, 5, 32, 32]

Paddle idioms on this side:
- root `DeepLabV3`: `backbone` (`Backbone`, its `stages` an nn.Sequential of three `ConvBNAct`)
  and `head` (`DeepLabV3Head`). The final upsample is INSIDE the head's forward
  (F.interpolate(scale_factor=4, mode="bilinear", align_corners=False), inline).
- `ConvBNAct` (PaddleSeg ConvBNReLU-like): `_conv` Conv2D(bias_attr=False), `_batch_norm`
  BatchNorm2D(momentum=0.99, epsilon=1e-3); the ReLU is F.relu INLINE in its forward.
- `ASPPModule` keeps its branches as NAMED attributes, registered `image_pooling` FIRST, then
  `aspp_1x1`, `aspp_d2`, `aspp_d3`, `project`, `dropout`; the forward concatenates them in the
  order 1x1, d2, d3, pooling.
- `ImagePool`: the global average pool is paddle.mean(x, axis=[2, 3], keepdim=True) inline, then
  its `conv_bn_act` (ConvBNAct 1x1), then F.interpolate(size=[8, 8], mode="bilinear",
  align_corners=True) inline (from a 1x1 map every corner convention gives the same constant).
- model() gives every BN trained-looking affine weights and running statistics, and the
  classifier a non-zero bias (seeded, rng 131), so no BN is an identity.

The torch side (port_deeplab_aspp_torch.py) was written independently in the torchvision style.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_proj_bn_eps   -> the ASPP projection's ConvBNAct is built without passing the
                          checkpoint's epsilon, so its BatchNorm2D uses paddle's default 1e-5
                          instead of 1e-3 (precision-level)
  paddle_pool_no_relu  -> the image-pooling branch builds its ConvBNAct with act=None, so the
                          pooled branch skips the ReLU after its BN
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IN_CH, STEM_CH, FEAT_CH, ASPP_CH, NUM_CLASSES = 3, 8, 16, 12, 5
RATES = (2, 3)
BN_EPS = 1e-3
BATCH, SIZE = 2, 32
OWN_BUGS = {"paddle_proj_bn_eps", "paddle_pool_no_relu"}
OTHER_BUGS = {"torch_rates_os8", "torch_final_align_corners"}


class ConvBNAct(nn.Layer):
    def __init__(self, in_ch, out_ch, kernel_size, stride=1, dilation=1, act="relu", epsilon=BN_EPS):
        super().__init__()
        self.act = act
        padding = dilation * (kernel_size // 2)
        self._conv = nn.Conv2D(in_ch, out_ch, kernel_size, stride=stride, padding=padding, dilation=dilation,
                               bias_attr=False, data_format="NCHW")
        if epsilon is None:
            self._batch_norm = nn.BatchNorm2D(out_ch, momentum=0.99, data_format="NCHW")
        else:
            self._batch_norm = nn.BatchNorm2D(out_ch, momentum=0.99, epsilon=epsilon, data_format="NCHW")

    def forward(self, x):
        x = self._batch_norm(self._conv(x))
        if self.act == "relu":
            x = F.relu(x)
        return x


class Backbone(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stages = nn.Sequential(
            ConvBNAct(IN_CH, STEM_CH, 3, stride=2),
            ConvBNAct(STEM_CH, FEAT_CH, 3, stride=2),
            ConvBNAct(FEAT_CH, FEAT_CH, 3, stride=1),
        )

    def forward(self, x):
        return self.stages(x)


class ImagePool(nn.Layer):
    def __init__(self, in_ch, out_ch, act="relu"):
        super().__init__()
        self.conv_bn_act = ConvBNAct(in_ch, out_ch, 1, act=act)

    def forward(self, x):
        h, w = x.shape[2], x.shape[3]
        y = paddle.mean(x, axis=[2, 3], keepdim=True)
        y = self.conv_bn_act(y)
        return F.interpolate(y, size=[h, w], mode="bilinear", align_corners=True, data_format="NCHW")


class ASPPModule(nn.Layer):
    def __init__(self, in_ch, out_ch, rates, proj_bug=False, pool_bug=False):
        super().__init__()
        self.image_pooling = ImagePool(in_ch, out_ch, act=None if pool_bug else "relu")
        self.aspp_1x1 = ConvBNAct(in_ch, out_ch, 1)
        self.aspp_d2 = ConvBNAct(in_ch, out_ch, 3, dilation=rates[0])
        self.aspp_d3 = ConvBNAct(in_ch, out_ch, 3, dilation=rates[1])
        self.project = ConvBNAct(4 * out_ch, out_ch, 1, epsilon=None if proj_bug else BN_EPS)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        branches = [self.aspp_1x1(x), self.aspp_d2(x), self.aspp_d3(x), self.image_pooling(x)]
        x = paddle.concat(branches, axis=1)
        return self.dropout(self.project(x))


class DeepLabV3Head(nn.Layer):
    def __init__(self, proj_bug=False, pool_bug=False):
        super().__init__()
        self.aspp = ASPPModule(FEAT_CH, ASPP_CH, RATES, proj_bug, pool_bug)
        self.conv_bn_act = ConvBNAct(ASPP_CH, ASPP_CH, 3)
        self.cls = nn.Conv2D(ASPP_CH, NUM_CLASSES, 1, data_format="NCHW")

    def forward(self, feat):
        x = self.aspp(feat)
        x = self.conv_bn_act(x)
        logit = self.cls(x)
        return F.interpolate(logit, scale_factor=4, mode="bilinear", align_corners=False, data_format="NCHW")


class DeepLabV3(nn.Layer):
    def __init__(self, proj_bug=False, pool_bug=False):
        super().__init__()
        self.backbone = Backbone()
        self.head = DeepLabV3Head(proj_bug, pool_bug)

    def forward(self, x):
        feat = self.backbone(x)
        return [self.head(feat)]


def _trained_look(m):
    rng = np.random.default_rng(131)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, n).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, n).astype("float32"))
    m.head.cls.bias.set_value(rng.normal(0.0, 0.2, NUM_CLASSES).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_deeplab_aspp paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = DeepLabV3(proj_bug=bug == "paddle_proj_bn_eps", pool_bug=bug == "paddle_pool_no_relu")
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(31)
    return rng.standard_normal((BATCH, IN_CH, SIZE, SIZE)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # segmentation logits [2, 5, 32, 32] (the list's only element)
    logit = output[0] if isinstance(output, (list, tuple)) else output
    return (logit**2).mean()
