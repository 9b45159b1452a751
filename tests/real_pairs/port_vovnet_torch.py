"""Hand-written port, torch side: a tiny VoVNet-v2 style classifier (written by "person B").

The same math as port_vovnet_paddle.py, re-implemented by hand in the style of the official
VoVNet-v2 code (youngwanLEE/vovnet-detectron2): input [2, 3, 32, 32] (positional), logits
[2, 10]. Stem (two conv3x3-BN-ReLU, the first with stride 2), `stage2` (one OSA module, no
pooling), `stage3` (max-pool 3x3 s2 ceil_mode=True, then two OSA modules, the second with an
identity residual), global average pool and a Linear classifier.

Torch idioms on this side:
- `conv3x3` / `conv1x1` helpers return (name, module) tuples: `{module}_{postfix}_conv`,
  `..._norm`, `..._relu`, so conv / BN / ReLU are THREE modules inside an OrderedDict
  nn.Sequential (the stem is one Sequential of six modules: stem_1_conv ... stem_2_relu).
- `_OSA_module` registers `layers` (ModuleList of conv3x3 Sequentials), then `concat` (conv1x1
  Sequential), then `ese`; it concatenates [input, layer outputs] with torch.cat and adds the
  identity inline.
- `eSEModule` registers `avg_pool` (nn.AdaptiveAvgPool2d(1)), `fc` (Conv2d 1x1 with bias) and
  `hsigmoid` (a `Hsigmoid` module: F.relu6(x + 3) / 6), and returns input * gate.
- `_OSA_stage` is an nn.Sequential subclass: a `Pooling` module (nn.MaxPool2d(3, 2,
  ceil_mode=True)) first when the stage down-samples, then modules `OSA{stage}_{i}`.
- root `VoVNet` registers `classifier` FIRST, then `stem`, `stage2`, `stage3`; the head's
  global pool is inline F.adaptive_avg_pool2d + flatten.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_cat_order  -> _OSA_module concatenates the layer outputs FIRST and the block input last
                      (torch.cat(output[1:] + output[:1])), so the 1x1 concat conv's input
                      channels are permuted, in every OSA module
  torch_pool_floor -> the stage's `Pooling` is nn.MaxPool2d(3, 2) without ceil_mode=True, so the
                      16x16 map pools to 7x7 instead of 8x8 (the last row / column window is
                      dropped)
"""
import os
from collections import OrderedDict

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

N_CLASSES = 10
BATCH, SIZE = 2, 32
OWN_BUGS = {"torch_cat_order", "torch_pool_floor"}
OTHER_BUGS = {"paddle_ese_hsig_slope", "paddle_stem_bn_eps"}

STEM_CH = [16, 16]
STAGE_CONV_CH = [8, 12]
CONCAT_CH = [24, 32]
BLOCK_PER_STAGE = [1, 2]
LAYER_PER_BLOCK = 3


def conv3x3(in_channels, out_channels, module_name, postfix, stride=1):
    return [
        (f"{module_name}_{postfix}_conv",
         nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=stride, padding=1, bias=False)),
        (f"{module_name}_{postfix}_norm", nn.BatchNorm2d(out_channels)),
        (f"{module_name}_{postfix}_relu", nn.ReLU(inplace=True)),
    ]


def conv1x1(in_channels, out_channels, module_name, postfix):
    return [
        (f"{module_name}_{postfix}_conv",
         nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=1, padding=0, bias=False)),
        (f"{module_name}_{postfix}_norm", nn.BatchNorm2d(out_channels)),
        (f"{module_name}_{postfix}_relu", nn.ReLU(inplace=True)),
    ]


class Hsigmoid(nn.Module):
    def forward(self, x):
        return F.relu6(x + 3.0) / 6.0


class eSEModule(nn.Module):
    def __init__(self, channel):
        super().__init__()
        self.avg_pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Conv2d(channel, channel, kernel_size=1, padding=0)
        self.hsigmoid = Hsigmoid()

    def forward(self, x):
        inp = x
        x = self.avg_pool(x)
        x = self.fc(x)
        x = self.hsigmoid(x)
        return inp * x


class _OSA_module(nn.Module):
    def __init__(self, in_ch, stage_ch, concat_ch, layer_per_block, module_name, identity=False,
                 cat_order_bug=False):
        super().__init__()
        self.identity = identity
        self.cat_order_bug = cat_order_bug
        self.layers = nn.ModuleList()
        in_channel = in_ch
        for i in range(layer_per_block):
            self.layers.append(nn.Sequential(OrderedDict(conv3x3(in_channel, stage_ch, module_name, i))))
            in_channel = stage_ch
        in_channel = in_ch + layer_per_block * stage_ch
        self.concat = nn.Sequential(OrderedDict(conv1x1(in_channel, concat_ch, module_name, "concat")))
        self.ese = eSEModule(concat_ch)

    def forward(self, x):
        identity_feat = x
        output = [x]
        for layer in self.layers:
            x = layer(x)
            output.append(x)
        if self.cat_order_bug:
            x = torch.cat(output[1:] + output[:1], dim=1)
        else:
            x = torch.cat(output, dim=1)
        xt = self.concat(x)
        xt = self.ese(xt)
        if self.identity:
            xt = xt + identity_feat
        return xt


class _OSA_stage(nn.Sequential):
    def __init__(self, in_ch, stage_ch, concat_ch, block_per_stage, layer_per_block, stage_num,
                 cat_order_bug=False, pool_floor=False):
        super().__init__()
        if stage_num != 2:
            if pool_floor:
                self.add_module("Pooling", nn.MaxPool2d(kernel_size=3, stride=2))
            else:
                self.add_module("Pooling", nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True))
        for i in range(block_per_stage):
            name = f"OSA{stage_num}_{i + 1}"
            self.add_module(name, _OSA_module(in_ch if i == 0 else concat_ch, stage_ch, concat_ch,
                                              layer_per_block, name, identity=i > 0,
                                              cat_order_bug=cat_order_bug))


class VoVNet(nn.Module):
    def __init__(self, cat_order_bug=False, pool_floor=False):
        super().__init__()
        self.classifier = nn.Linear(CONCAT_CH[-1], N_CLASSES)
        stem = conv3x3(3, STEM_CH[0], "stem", "1", 2)
        stem += conv3x3(STEM_CH[0], STEM_CH[1], "stem", "2", 1)
        self.stem = nn.Sequential(OrderedDict(stem))
        in_ch_list = [STEM_CH[-1]] + CONCAT_CH[:-1]
        self.stage_names = []
        for i in range(len(CONCAT_CH)):
            name = f"stage{i + 2}"
            self.stage_names.append(name)
            self.add_module(name, _OSA_stage(in_ch_list[i], STAGE_CONV_CH[i], CONCAT_CH[i],
                                             BLOCK_PER_STAGE[i], LAYER_PER_BLOCK, i + 2,
                                             cat_order_bug=cat_order_bug, pool_floor=pool_floor))

    def forward(self, x):
        x = self.stem(x)
        for name in self.stage_names:
            x = getattr(self, name)(x)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.classifier(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_vovnet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = VoVNet(cat_order_bug=bug == "torch_cat_order", pool_floor=bug == "torch_pool_floor")
    return m.eval()


def _image():
    rng = np.random.default_rng(41)
    return rng.standard_normal((BATCH, 3, SIZE, SIZE)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
