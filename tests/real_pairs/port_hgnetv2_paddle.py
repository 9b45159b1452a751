"""Hand-written port, paddle side: a tiny PP-HGNetV2 classifier, PaddleClas style (written by "person A").

Input: one image batch x [2, 3, 32, 32] (positional, NCHW, numpy rng seed 13, standard normal).
Output: logits [2, 10]. use_lab=True everywhere (as in PP-HGNetV2-B0 .. B3).

ConvBNAct = conv (no bias) -> bn (eps 1e-5) -> [relu -> lab]; lab = LearnableAffineBlock,
scale * x + bias with one scalar parameter each. Padding (k - 1) // 2 unless given as "SAME".

  stem (StemBlock, 3 -> 8 -> 16):
    stem1  ConvBNAct 3x3 s2 3 -> 8                                   -> [2, 8, 16, 16]
    stem2a ConvBNAct 2x2 s1 8 -> 4, padding "SAME" (0 before, 1 after)
    stem2b ConvBNAct 2x2 s1 4 -> 8, padding "SAME"
    pool   MaxPool2D(2, stride 1, ceil_mode, padding "SAME") on stem1's output
    concat [pool, stem2b] on channels (16) -> stem3 ConvBNAct 3x3 s2 16 -> 8 -> stem4 1x1 8 -> 16
                                                                     -> [2, 16, 8, 8]
  stages.0 (HGV2_Stage, no downsample): one HGV2_Block 16 -> 32, mid 8, 3 ConvBNAct 3x3 layers
  stages.1 (HGV2_Stage): downsample = depthwise ConvBNAct 3x3 s2 (no act, so no lab), then two
           HGV2_Block 32 -> 48 / 48 -> 48, mid 16, 3 LightConvBNAct layers with 5x5 depthwise
           kernels; the second block adds its input (identity)              -> [2, 48, 4, 4]
  HGV2_Block: out = [x]; each layer x = layer(x), appended; concat -> aggregation_squeeze_conv
  (1x1 -> out / 2) -> aggregation_excitation_conv (1x1 -> out) [+ identity]
  LightConvBNAct: conv1 = 1x1 ConvBNAct without act, conv2 = depthwise kxk ConvBNAct with act.
  head: avg_pool -> last_conv 1x1 48 -> 64 (no bias) -> act (ReLU) -> lab -> dropout (p 0) ->
  flatten -> fc Linear(64, 10)

Paddle idioms on this side:
- `stages` is an nn.LayerList iterated in the forward; each stage's `blocks` is an nn.Sequential
  and each block's `layers` an nn.LayerList;
- `LearnableAffineBlock` creates `scale` / `bias` with create_parameter (shape [1]) and a
  ParamAttr learning rate of 0.01, then add_parameter;
- the aggregation convs are two attributes of the block (no container);
- the stem pool is nn.MaxPool2D(padding="SAME") and the 2x2 stem convs nn.Conv2D(padding="SAME"):
  the asymmetric padding is done inside the modules;
- the head modules `avg_pool`, `last_conv`, `act`, `lab`, `dropout`, `flatten`, `fc` sit on the
  root; the Linear weight is [in, out].
- model() gives every BN trained-looking affine weights and running statistics, every
  LearnableAffineBlock a trained-looking scale (U(0.7, 1.3)) and bias (N(0, 0.1)), and fc a
  non-zero bias (numpy rng seed 29); stem1's lab bias is set to -0.06 (its output can be negative).

The torch side (port_hgnetv2_torch.py) was written independently, timm style (hgnetv2.py):
StemV2 with F.pad inline, HighPerfGpuStage / HighPerfGpuBlock with an `aggregation`
nn.Sequential, an nn.Sequential `stages`, ConvBNAct with Identity placeholders, and a
ClassifierHead holding `global_pool` and a `last_conv` nn.Sequential(conv, act, lab).

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_lab_bias_first   -> LearnableAffineBlock.forward returns scale * (x + bias) instead of
                             scale * x + bias (every lab of the model)
  paddle_downsample_same  -> HGV2_Stage builds its depthwise stride-2 downsample ConvBNAct with
                             padding="SAME" (0 before, 1 after on even sizes) like the stem's 2x2
                             convs, instead of the symmetric (k - 1) // 2 = 1
"""
import os

import numpy as np
import paddle
from paddle import ParamAttr, nn
from paddle.nn.initializer import Constant

BATCH, IMG, NUM_CLASSES, CLASS_EXPAND = 2, 32, 10, 64
OWN_BUGS = {"paddle_lab_bias_first", "paddle_downsample_same"}
OTHER_BUGS = {"torch_stem_pool_zero_pad", "torch_hg_cat_input_last"}

STEM_CHANNELS = [3, 8, 16]
# in, mid, out, block_num, is_downsample, light_block, kernel_size, layer_num
STAGE_CONFIG = {
    "stage1": [16, 8, 32, 1, False, False, 3, 3],
    "stage2": [32, 16, 48, 2, True, True, 5, 3],
}

_BUG = {"name": ""}


class LearnableAffineBlock(nn.Layer):
    def __init__(self, scale_value=1.0, bias_value=0.0, lr_mult=1.0, lab_lr=0.01):
        super().__init__()
        self.scale = self.create_parameter(
            shape=[1], default_initializer=Constant(value=scale_value), attr=ParamAttr(learning_rate=lr_mult * lab_lr)
        )
        self.add_parameter("scale", self.scale)
        self.bias = self.create_parameter(
            shape=[1], default_initializer=Constant(value=bias_value), attr=ParamAttr(learning_rate=lr_mult * lab_lr)
        )
        self.add_parameter("bias", self.bias)
        self.bias_first = _BUG["name"] == "paddle_lab_bias_first"

    def forward(self, x):
        if self.bias_first:
            return self.scale * (x + self.bias)
        return self.scale * x + self.bias


class ConvBNAct(nn.Layer):
    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=1, groups=1, use_act=True,
                 use_lab=False):
        super().__init__()
        self.use_act = use_act
        self.use_lab = use_lab
        self.conv = nn.Conv2D(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding=padding if isinstance(padding, str) else (kernel_size - 1) // 2,
            groups=groups,
            bias_attr=False,
        )
        self.bn = nn.BatchNorm2D(out_channels)
        if self.use_act:
            self.act = nn.ReLU()
            if self.use_lab:
                self.lab = LearnableAffineBlock()

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        if self.use_act:
            x = self.act(x)
            if self.use_lab:
                x = self.lab(x)
        return x


class LightConvBNAct(nn.Layer):
    def __init__(self, in_channels, out_channels, kernel_size, use_lab=False, **kwargs):
        super().__init__()
        self.conv1 = ConvBNAct(in_channels, out_channels, kernel_size=1, use_act=False, use_lab=use_lab)
        self.conv2 = ConvBNAct(out_channels, out_channels, kernel_size=kernel_size, groups=out_channels, use_act=True,
                               use_lab=use_lab)

    def forward(self, x):
        x = self.conv1(x)
        x = self.conv2(x)
        return x


class StemBlock(nn.Layer):
    def __init__(self, in_channels, mid_channels, out_channels, use_lab=False):
        super().__init__()
        self.stem1 = ConvBNAct(in_channels, mid_channels, kernel_size=3, stride=2, use_lab=use_lab)
        self.stem2a = ConvBNAct(mid_channels, mid_channels // 2, kernel_size=2, stride=1, padding="SAME",
                                use_lab=use_lab)
        self.stem2b = ConvBNAct(mid_channels // 2, mid_channels, kernel_size=2, stride=1, padding="SAME",
                                use_lab=use_lab)
        self.stem3 = ConvBNAct(mid_channels * 2, mid_channels, kernel_size=3, stride=2, use_lab=use_lab)
        self.stem4 = ConvBNAct(mid_channels, out_channels, kernel_size=1, stride=1, use_lab=use_lab)
        self.pool = nn.MaxPool2D(kernel_size=2, stride=1, ceil_mode=True, padding="SAME")

    def forward(self, x):
        x = self.stem1(x)
        x2 = self.stem2a(x)
        x2 = self.stem2b(x2)
        x1 = self.pool(x)
        x = paddle.concat([x1, x2], 1)
        x = self.stem3(x)
        x = self.stem4(x)
        return x


class HGV2_Block(nn.Layer):
    def __init__(self, in_channels, mid_channels, out_channels, kernel_size=3, layer_num=6, identity=False,
                 light_block=True, use_lab=False):
        super().__init__()
        self.identity = identity
        self.layers = nn.LayerList()
        block_type = LightConvBNAct if light_block else ConvBNAct
        for i in range(layer_num):
            self.layers.append(
                block_type(in_channels=in_channels if i == 0 else mid_channels, out_channels=mid_channels, stride=1,
                           kernel_size=kernel_size, use_lab=use_lab)
            )
        total_channels = in_channels + layer_num * mid_channels
        self.aggregation_squeeze_conv = ConvBNAct(total_channels, out_channels // 2, kernel_size=1, stride=1,
                                                  use_lab=use_lab)
        self.aggregation_excitation_conv = ConvBNAct(out_channels // 2, out_channels, kernel_size=1, stride=1,
                                                     use_lab=use_lab)

    def forward(self, x):
        identity = x
        output = [x]
        for layer in self.layers:
            x = layer(x)
            output.append(x)
        x = paddle.concat(output, axis=1)
        x = self.aggregation_squeeze_conv(x)
        x = self.aggregation_excitation_conv(x)
        if self.identity:
            x = x + identity
        return x


class HGV2_Stage(nn.Layer):
    def __init__(self, in_channels, mid_channels, out_channels, block_num, layer_num=6, is_downsample=True,
                 light_block=True, kernel_size=3, use_lab=False, stride=2):
        super().__init__()
        self.is_downsample = is_downsample
        if self.is_downsample:
            pad = "SAME" if _BUG["name"] == "paddle_downsample_same" else 1
            self.downsample = ConvBNAct(in_channels, in_channels, kernel_size=3, stride=stride, padding=pad,
                                        groups=in_channels, use_act=False, use_lab=use_lab)
        blocks_list = []
        for i in range(block_num):
            blocks_list.append(
                HGV2_Block(in_channels=in_channels if i == 0 else out_channels, mid_channels=mid_channels,
                           out_channels=out_channels, kernel_size=kernel_size, layer_num=layer_num,
                           identity=i != 0, light_block=light_block, use_lab=use_lab)
            )
        self.blocks = nn.Sequential(*blocks_list)

    def forward(self, x):
        if self.is_downsample:
            x = self.downsample(x)
        x = self.blocks(x)
        return x


class PPHGNetV2(nn.Layer):
    def __init__(self, stage_config=STAGE_CONFIG, stem_channels=STEM_CHANNELS, use_lab=True, class_expand=CLASS_EXPAND,
                 dropout_prob=0.0, class_num=NUM_CLASSES):
        super().__init__()
        self.use_lab = use_lab
        self.stem = StemBlock(stem_channels[0], stem_channels[1], stem_channels[2], use_lab=use_lab)
        self.stages = nn.LayerList()
        for k in stage_config:
            in_c, mid_c, out_c, block_num, is_downsample, light_block, kernel_size, layer_num = stage_config[k]
            self.stages.append(
                HGV2_Stage(in_c, mid_c, out_c, block_num, layer_num, is_downsample, light_block, kernel_size, use_lab)
            )
        self.avg_pool = nn.AdaptiveAvgPool2D(1)
        self.last_conv = nn.Conv2D(out_c, class_expand, kernel_size=1, stride=1, padding=0, bias_attr=False)
        self.act = nn.ReLU()
        if self.use_lab:
            self.lab = LearnableAffineBlock()
        self.dropout = nn.Dropout(p=dropout_prob, mode="downscale_in_infer")
        self.flatten = nn.Flatten(start_axis=1, stop_axis=-1)
        self.fc = nn.Linear(class_expand, class_num)

    def forward(self, x):
        x = self.stem(x)
        for stage in self.stages:
            x = stage(x)
        x = self.avg_pool(x)
        x = self.last_conv(x)
        x = self.act(x)
        if self.use_lab:
            x = self.lab(x)
        x = self.dropout(x)
        x = self.flatten(x)
        x = self.fc(x)
        return x


def _trained_look(m):
    rng = np.random.default_rng(29)
    for name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, c).astype("float32"))
        elif isinstance(layer, LearnableAffineBlock):
            layer.scale.set_value(rng.uniform(0.7, 1.3, [1]).astype("float32"))
            b = -0.06 if name == "stem.stem1.lab" else rng.normal(0.0, 0.1)
            layer.bias.set_value(np.array([b], dtype="float32"))
        elif isinstance(layer, nn.Linear):
            layer.bias.set_value(rng.normal(0.0, 0.2, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_hgnetv2 paddle: unknown PADIFF_BUG {bug!r}")
    _BUG["name"] = bug if bug in OWN_BUGS else ""
    paddle.seed(0)
    m = PPHGNetV2()
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(13)
    return rng.standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
