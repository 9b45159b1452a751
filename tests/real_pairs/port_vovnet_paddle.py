"""Hand-written port, paddle side: a tiny VoVNet-v2 style classifier (written by "person A").

Input: one image batch [2, 3, 32, 32] (positional, NCHW, numpy rng seed 41, standard normal).
Output: logits [2, 10].

Network (eval mode, BatchNorm with trained-looking running statistics):
  stem      conv3x3 s2 (3 -> 16) + BN + ReLU, conv3x3 (16 -> 16) + BN + ReLU       -> [2, 16, 16, 16]
  stage 0   no down-sampling; one OSA block: in 16, three 3x3 conv-BN-ReLU layers of 8
            channels, concat [input, l1, l2, l3] = 40 channels, 1x1 conv-BN-ReLU -> 24,
            then eSE                                                                  -> [2, 24, 16, 16]
  stage 1   max-pool 3x3 s2 ceil_mode=True (16 -> 8); OSA block (24 -> 3 x 12 -> concat 60
            -> 32, eSE), OSA block (32 -> 3 x 12 -> concat 68 -> 32, eSE, identity residual
            because in == out)                                                        -> [2, 32, 8, 8]
  head      global average pool, Linear(32, 10)
eSE (effective squeeze-excitation): s = mean over H, W; s = fc(s) (1x1 conv with bias, C -> C);
gate = hard-sigmoid(s) = relu6(s + 3) / 6; out = x * gate.

Paddle idioms on this side (PaddleDetection style):
- `ConvBNLayer` is ONE module: children `conv` (Conv2D, no bias) and `bn` (BatchNorm2D); the
  ReLU is inline (F.relu) at the end of its forward when act=True.
- `OSABlock` registers `ese` FIRST, then `layers` (LayerList of ConvBNLayer), then
  `concat_conv` (ConvBNLayer 1x1). The concat and the identity residual are inline.
- `ESEModule` has one child `fc` (Conv2D 1x1 with bias); the global pool (paddle.mean) and the
  hard-sigmoid (F.relu6(s + 3) / 6) are inline formulas.
- `VoVStage`: `blocks` LayerList; the stage's max-pool is inline F.max_pool2d(ceil_mode=True)
  at the start of its forward (no pool module).
- root `VoVNet`: `stem` (nn.Sequential of two ConvBNLayer), `stages` (LayerList, iterated),
  `fc` (Linear 32 -> 10); the global pool of the head is inline paddle.mean.
- model() gives every BN trained-looking affine weights / running statistics and the eSE fc /
  classifier biases non-zero values (seeded; paddle initialises biases to 0), so that nothing
  is an identity.

The torch side (port_vovnet_torch.py) was written independently in the style of the official
VoVNet code (youngwanLEE): conv / norm / relu as three modules in an OrderedDict Sequential, a
`Hsigmoid` module, an nn.AdaptiveAvgPool2d module in eSE, stages as nn.Sequential subclasses
with a `Pooling` module.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_ese_hsig_slope -> ESEModule's inline hard-sigmoid uses the old fluid hard_sigmoid
                           convention clip(0.2 * s + 0.5, 0, 1) instead of relu6(s + 3) / 6
                           (slope 1/5 instead of 1/6), in every eSE
  paddle_stem_bn_eps    -> the stem's ConvBNLayers build their BatchNorm2D with epsilon=1e-3
                           (a TF-style norm eps) instead of 1e-5: precision-level
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

NUM_CLASSES = 10
BATCH, IMG = 2, 32
OWN_BUGS = {"paddle_ese_hsig_slope", "paddle_stem_bn_eps"}
OTHER_BUGS = {"torch_cat_order", "torch_pool_floor"}

# (stage channels, concat channels, blocks, down-sample first)
STAGE_CFG = [(8, 24, 1, False), (12, 32, 2, True)]
LAYERS_PER_BLOCK = 3
STEM_CH = 16


class ConvBNLayer(nn.Layer):
    def __init__(self, in_ch, out_ch, kernel, stride=1, act=True, eps=1e-5):
        super().__init__()
        self.act = act
        self.conv = nn.Conv2D(in_ch, out_ch, kernel, stride=stride, padding=(kernel - 1) // 2,
                              bias_attr=False, data_format="NCHW")
        self.bn = nn.BatchNorm2D(out_ch, momentum=0.9, epsilon=eps, data_format="NCHW")

    def forward(self, x):
        y = self.bn(self.conv(x))
        return F.relu(y) if self.act else y


class ESEModule(nn.Layer):
    def __init__(self, channels, fluid_slope=False):
        super().__init__()
        self.fluid_slope = fluid_slope
        self.fc = nn.Conv2D(channels, channels, 1, data_format="NCHW")

    def forward(self, x):
        s = paddle.mean(x, axis=[2, 3], keepdim=True)
        s = self.fc(s)
        if self.fluid_slope:
            gate = paddle.clip(0.2 * s + 0.5, 0.0, 1.0)
        else:
            gate = F.relu6(s + 3.0) / 6.0
        return x * gate


class OSABlock(nn.Layer):
    def __init__(self, in_ch, stage_ch, concat_ch, n_layers, identity=False, fluid_slope=False):
        super().__init__()
        self.identity = identity
        self.ese = ESEModule(concat_ch, fluid_slope)
        self.layers = nn.LayerList(
            [ConvBNLayer(in_ch if i == 0 else stage_ch, stage_ch, 3) for i in range(n_layers)])
        self.concat_conv = ConvBNLayer(in_ch + n_layers * stage_ch, concat_ch, 1)

    def forward(self, x):
        feats = [x]
        h = x
        for layer in self.layers:
            h = layer(h)
            feats.append(h)
        y = self.concat_conv(paddle.concat(feats, axis=1))
        y = self.ese(y)
        if self.identity:
            y = y + x
        return y


class VoVStage(nn.Layer):
    def __init__(self, in_ch, stage_ch, concat_ch, n_blocks, downsample, fluid_slope=False):
        super().__init__()
        self.downsample = downsample
        blocks = []
        for i in range(n_blocks):
            blocks.append(OSABlock(in_ch if i == 0 else concat_ch, stage_ch, concat_ch, LAYERS_PER_BLOCK,
                                   identity=i > 0, fluid_slope=fluid_slope))
        self.blocks = nn.LayerList(blocks)

    def forward(self, x):
        if self.downsample:
            x = F.max_pool2d(x, kernel_size=3, stride=2, ceil_mode=True)
        for block in self.blocks:
            x = block(x)
        return x


class VoVNet(nn.Layer):
    def __init__(self, fluid_slope=False, stem_eps=1e-5):
        super().__init__()
        self.stem = nn.Sequential(
            ConvBNLayer(3, STEM_CH, 3, stride=2, eps=stem_eps),
            ConvBNLayer(STEM_CH, STEM_CH, 3, stride=1, eps=stem_eps),
        )
        stages = []
        in_ch = STEM_CH
        for stage_ch, concat_ch, n_blocks, down in STAGE_CFG:
            stages.append(VoVStage(in_ch, stage_ch, concat_ch, n_blocks, down, fluid_slope))
            in_ch = concat_ch
        self.stages = nn.LayerList(stages)
        self.fc = nn.Linear(in_ch, NUM_CLASSES)

    def forward(self, x):
        x = self.stem(x)
        for stage in self.stages:
            x = stage(x)
        x = paddle.mean(x, axis=[2, 3])
        return self.fc(x)


def _trained_look(m):
    rng = np.random.default_rng(4101)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.1, 0.3, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, c).astype("float32"))
        if isinstance(layer, ESEModule):
            c = layer.fc.bias.shape[0]
            layer.fc.bias.set_value(rng.normal(0.0, 0.8, c).astype("float32"))
    m.fc.bias.set_value(rng.normal(0.0, 0.1, NUM_CLASSES).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_vovnet paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = VoVNet(fluid_slope=bug == "paddle_ese_hsig_slope",
               stem_eps=1e-3 if bug == "paddle_stem_bn_eps" else 1e-5)
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(41)
    return rng.standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
