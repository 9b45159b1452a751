"""Hand-written port, torch side: a tiny PP-HGNetV2 classifier, timm style (written by "person B").

The same math as port_hgnetv2_paddle.py, re-implemented by hand the way timm's hgnetv2.py
builds it (HighPerfGpuNet, use_lab=True): input x [2, 3, 32, 32] (positional), output logits
[2, 10].

  stem (StemV2 3 -> 8 -> 16): stem1 3x3 s2; stem2a / stem2b 2x2 convs (padding 0) on a
       right / bottom zero-padded map (F.pad inline); pool = nn.MaxPool2d(2, 1, ceil_mode)
       on stem1's output padded right / bottom with -inf; cat [pooled, stem2b] -> stem3 3x3 s2
       -> stem4 1x1
  stages.0 HighPerfGpuStage, downsample = Identity, one HighPerfGpuBlock 16 -> 32 (mid 8,
           3 ConvBNAct 3x3 layers)
  stages.1 HighPerfGpuStage, downsample = depthwise ConvBNAct 3x3 s2 (no act: act / lab are
           Identity), two HighPerfGpuBlock 32 -> 48 / 48 -> 48 (mid 16, 3 LightConvBNAct with
           5x5 depthwise), the second with residual
  head (ClassifierHead): global_pool (SelectAdaptivePool2d avg, no flatten) -> last_conv
       nn.Sequential(Conv2d 48 -> 64 no bias, ReLU, LearnableAffineBlock) -> dropout (p 0) ->
       flatten -> fc Linear(64, 10)

Torch idioms on this side:
- `ConvBNAct` always registers conv / bn / act / lab: act is nn.Identity when use_act is False,
  lab is nn.Identity unless use_act and use_lab (so these Identity calls have no paddle twin);
- `LearnableAffineBlock` holds nn.Parameter(torch.tensor([v])) `scale` and `bias`;
- `HighPerfGpuBlock` keeps its layers in an nn.ModuleList `layers`, its two 1x1 aggregation
  convs in an nn.Sequential `aggregation` (`aggregation.0` squeeze, `aggregation.1`
  excitation), a flag `residual` and a `drop_path` (Identity) applied before the residual add;
- `stages` is an nn.Sequential; the head is its own `ClassifierHead` module `head`;
- convs use timm's symmetric padding ((stride - 1) + (k - 1)) // 2, the asymmetric stem
  padding is F.pad inline in StemV2.forward.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_stem_pool_zero_pad -> StemV2 pads stem1's output ONCE with zeros (F.pad default) and
                              feeds that map to both the stem2a conv and the max pool (timm's
                              own code), so a right / bottom border window whose real cells are
                              all negative (lab bias < 0) pools to 0
  torch_hg_cat_input_last  -> HighPerfGpuBlock concatenates the layer outputs first and the
                              block input last, [l1, l2, l3, x], instead of [x, l1, l2, l3]
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

BATCH, IMG, NUM_CLASSES, HEAD_HIDDEN = 2, 32, 10, 64
OWN_BUGS = {"torch_stem_pool_zero_pad", "torch_hg_cat_input_last"}
OTHER_BUGS = {"paddle_lab_bias_first", "paddle_downsample_same"}

STEM_CFG = (8, 16)  # mid, out
# in, mid, out, blocks, downsample, light_block, kernel_size, layer_num
STAGES_CFG = (
    (16, 8, 32, 1, False, False, 3, 3),
    (32, 16, 48, 2, True, True, 5, 3),
)


def create_conv2d(in_chs, out_chs, kernel_size, stride=1, groups=1):
    padding = ((stride - 1) + (kernel_size - 1)) // 2
    return nn.Conv2d(in_chs, out_chs, kernel_size, stride=stride, padding=padding, groups=groups, bias=False)


class LearnableAffineBlock(nn.Module):
    def __init__(self, scale_value=1.0, bias_value=0.0):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor([scale_value]), requires_grad=True)
        self.bias = nn.Parameter(torch.tensor([bias_value]), requires_grad=True)

    def forward(self, x):
        return self.scale * x + self.bias


class ConvBNAct(nn.Module):
    def __init__(self, in_chs, out_chs, kernel_size, stride=1, groups=1, use_act=True, use_lab=False):
        super().__init__()
        self.use_act = use_act
        self.use_lab = use_lab
        self.conv = create_conv2d(in_chs, out_chs, kernel_size, stride=stride, groups=groups)
        self.bn = nn.BatchNorm2d(out_chs)
        self.act = nn.ReLU() if self.use_act else nn.Identity()
        self.lab = LearnableAffineBlock() if (self.use_act and self.use_lab) else nn.Identity()

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        x = self.act(x)
        x = self.lab(x)
        return x


class LightConvBNAct(nn.Module):
    def __init__(self, in_chs, out_chs, kernel_size, groups=1, use_lab=False):
        super().__init__()
        self.conv1 = ConvBNAct(in_chs, out_chs, kernel_size=1, use_act=False, use_lab=use_lab)
        self.conv2 = ConvBNAct(out_chs, out_chs, kernel_size=kernel_size, groups=out_chs, use_act=True,
                               use_lab=use_lab)

    def forward(self, x):
        x = self.conv1(x)
        x = self.conv2(x)
        return x


class StemV2(nn.Module):
    def __init__(self, in_chs, mid_chs, out_chs, use_lab=False, zero_pad_pool=False):
        super().__init__()
        self.zero_pad_pool = zero_pad_pool
        self.stem1 = ConvBNAct(in_chs, mid_chs, kernel_size=3, stride=2, use_lab=use_lab)
        self.stem2a = ConvBNAct(mid_chs, mid_chs // 2, kernel_size=2, stride=1, use_lab=use_lab)
        self.stem2b = ConvBNAct(mid_chs // 2, mid_chs, kernel_size=2, stride=1, use_lab=use_lab)
        self.stem3 = ConvBNAct(mid_chs * 2, mid_chs, kernel_size=3, stride=2, use_lab=use_lab)
        self.stem4 = ConvBNAct(mid_chs, out_chs, kernel_size=1, stride=1, use_lab=use_lab)
        self.pool = nn.MaxPool2d(kernel_size=2, stride=1, ceil_mode=True)

    def forward(self, x):
        x = self.stem1(x)
        if self.zero_pad_pool:
            x = F.pad(x, (0, 1, 0, 1))
            x1 = self.pool(x)
        else:
            # PaddleClas pools with padding="SAME": the pad cell must never win the max
            x1 = self.pool(F.pad(x, (0, 1, 0, 1), value=float("-inf")))
            x = F.pad(x, (0, 1, 0, 1))
        x2 = self.stem2a(x)
        x2 = F.pad(x2, (0, 1, 0, 1))
        x2 = self.stem2b(x2)
        x = torch.cat([x1, x2], dim=1)
        x = self.stem3(x)
        x = self.stem4(x)
        return x


class HighPerfGpuBlock(nn.Module):
    def __init__(self, in_chs, mid_chs, out_chs, layer_num, kernel_size=3, residual=False, light_block=False,
                 use_lab=False, cat_input_last=False):
        super().__init__()
        self.residual = residual
        self.cat_input_last = cat_input_last
        self.layers = nn.ModuleList()
        for i in range(layer_num):
            if light_block:
                self.layers.append(LightConvBNAct(in_chs if i == 0 else mid_chs, mid_chs, kernel_size=kernel_size,
                                                  use_lab=use_lab))
            else:
                self.layers.append(ConvBNAct(in_chs if i == 0 else mid_chs, mid_chs, kernel_size=kernel_size,
                                             stride=1, use_lab=use_lab))
        total_chs = in_chs + layer_num * mid_chs
        self.aggregation = nn.Sequential(
            ConvBNAct(total_chs, out_chs // 2, kernel_size=1, stride=1, use_lab=use_lab),
            ConvBNAct(out_chs // 2, out_chs, kernel_size=1, stride=1, use_lab=use_lab),
        )
        self.drop_path = nn.Identity()

    def forward(self, x):
        identity = x
        if self.cat_input_last:
            output = []
            for layer in self.layers:
                x = layer(x)
                output.append(x)
            output.append(identity)
        else:
            output = [x]
            for layer in self.layers:
                x = layer(x)
                output.append(x)
        x = torch.cat(output, dim=1)
        x = self.aggregation(x)
        if self.residual:
            x = self.drop_path(x) + identity
        return x


class HighPerfGpuStage(nn.Module):
    def __init__(self, in_chs, mid_chs, out_chs, block_num, layer_num, downsample=True, stride=2, light_block=False,
                 kernel_size=3, use_lab=False, cat_input_last=False):
        super().__init__()
        if downsample:
            self.downsample = ConvBNAct(in_chs, in_chs, kernel_size=3, stride=stride, groups=in_chs, use_act=False,
                                        use_lab=use_lab)
        else:
            self.downsample = nn.Identity()
        blocks_list = []
        for i in range(block_num):
            blocks_list.append(HighPerfGpuBlock(
                in_chs if i == 0 else out_chs, mid_chs, out_chs, layer_num, residual=i != 0,
                kernel_size=kernel_size, light_block=light_block, use_lab=use_lab, cat_input_last=cat_input_last))
        self.blocks = nn.Sequential(*blocks_list)

    def forward(self, x):
        x = self.downsample(x)
        x = self.blocks(x)
        return x


class SelectAdaptivePool2d(nn.Module):
    def __init__(self, pool_type="avg", flatten=False):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten(1) if flatten else nn.Identity()

    def forward(self, x):
        return self.flatten(self.pool(x))


class ClassifierHead(nn.Module):
    def __init__(self, in_features, num_classes, pool_type="avg", drop_rate=0.0, hidden_size=2048, use_lab=False):
        super().__init__()
        self.global_pool = SelectAdaptivePool2d(pool_type=pool_type)
        last_conv = nn.Conv2d(in_features, hidden_size, kernel_size=1, stride=1, padding=0, bias=False)
        act = nn.ReLU()
        if use_lab:
            self.last_conv = nn.Sequential(last_conv, act, LearnableAffineBlock())
        else:
            self.last_conv = nn.Sequential(last_conv, act)
        self.dropout = nn.Dropout(drop_rate)
        self.flatten = nn.Flatten(1)
        self.fc = nn.Linear(hidden_size, num_classes)

    def forward(self, x):
        x = self.global_pool(x)
        x = self.last_conv(x)
        x = self.dropout(x)
        x = self.flatten(x)
        return self.fc(x)


class HighPerfGpuNet(nn.Module):
    def __init__(self, num_classes=NUM_CLASSES, use_lab=True, head_hidden_size=HEAD_HIDDEN, zero_pad_pool=False,
                 cat_input_last=False):
        super().__init__()
        self.stem = StemV2(3, STEM_CFG[0], STEM_CFG[1], use_lab=use_lab, zero_pad_pool=zero_pad_pool)
        stages = []
        for in_chs, mid_chs, out_chs, block_num, downsample, light_block, kernel_size, layer_num in STAGES_CFG:
            stages.append(HighPerfGpuStage(in_chs, mid_chs, out_chs, block_num, layer_num, downsample=downsample,
                                           light_block=light_block, kernel_size=kernel_size, use_lab=use_lab,
                                           cat_input_last=cat_input_last))
        self.stages = nn.Sequential(*stages)
        self.num_features = out_chs
        self.head = ClassifierHead(self.num_features, num_classes, hidden_size=head_hidden_size, use_lab=use_lab)

    def forward_features(self, x):
        x = self.stem(x)
        return self.stages(x)

    def forward(self, x):
        return self.head(self.forward_features(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_hgnetv2 torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = HighPerfGpuNet(zero_pad_pool=bug == "torch_stem_pool_zero_pad",
                       cat_input_last=bug == "torch_hg_cat_input_last")
    return m.eval()


def _image():
    rng = np.random.default_rng(13)
    return rng.standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
