"""Hand-written port, torch side: a tiny Dual Path Network (DPN) image classifier (written by
"person B").

The same math as port_dpn_paddle.py, re-implemented by hand in the style of timm's dpn.py: input
`x` [2, 3, 16, 16] (positional), a conv-BN-ReLU-maxpool input block (16 channels), four
dual-path blocks (proj / normal at 8x8 with bottleneck 16, down / normal at 4x4 with bottleneck
32; groups 4, inc 8), a concat-BN-ReLU, global average pool and a 1x1-conv classifier -> logits
[2, 10]. All BatchNorms use eps 1e-3.

Torch idioms on this side:
- root `DPN`: `features` = nn.Sequential(OrderedDict) of `conv1_1` (InputBlock), `conv2_1`,
  `conv2_2`, `conv3_1`, `conv3_2` (DualPathBlock) and `conv5_bn_ac` (CatBnAct), called ONCE;
  then `global_pool` (nn.AdaptiveAvgPool2d(1)) and `classifier` = nn.Conv2d(64, 10, 1) (bias),
  flattened.
- `InputBlock`: `conv`, `bn`, `act` (nn.ReLU), `pool` (nn.MaxPool2d(3, 2, 1)).
- `DualPathBlock.forward(x)` takes ONE argument: a tensor (block conv2_1) or a (resid, dense)
  tuple, which it concatenates itself; it returns a (resid, dense) tuple. A projecting block
  registers ONE fused shortcut unit first, `c1x1_w_s1` (proj, stride 1) or `c1x1_w_s2` (down,
  stride 2): BnActConv2d with a conv of out_c + 2 * inc channels, sliced [:out_c] / [out_c:].
  Then `c1x1_a`, `c3x3_b`, `c1x1_c`. The shortcut is computed FIRST, then the main path.
- `BnActConv2d`: `bn`, `act` (nn.ReLU), `conv` (no bias).
- `CatBnAct`: concatenates the tuple, then `bn`, `act`.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_stride_on_1x1 -> the down block puts its stride 2 on the first 1x1 unit (c1x1_a, ResNet
                         v1 style) instead of the grouped 3x3 unit (c3x3_b); the shapes still match
  torch_proj_no_relu  -> the shortcut projection unit is built without its ReLU (act =
                         nn.Identity, "like a ResNet downsample"), in both projecting blocks
"""
import os
from collections import OrderedDict

import numpy as np
import torch
from torch import nn

IN_CHANS, NUM_INIT_FEATURES, NUM_CLASSES, BN_EPS = 3, 16, 10, 1e-3
K_R, GROUPS, K_SEC, INC_SEC = (16, 32), 4, (2, 2), (8, 8)
OUT_C = (16, 32)
BATCH, SIZE = 2, 16
OWN_BUGS = {"torch_stride_on_1x1", "torch_proj_no_relu"}
OTHER_BUGS = {"paddle_dense_concat_order", "paddle_bn_eps_default"}


class BnActConv2d(nn.Module):
    def __init__(self, in_chs, out_chs, kernel_size, stride=1, groups=1, act=True):
        super().__init__()
        self.bn = nn.BatchNorm2d(in_chs, eps=BN_EPS)
        self.act = nn.ReLU(inplace=False) if act else nn.Identity()
        self.conv = nn.Conv2d(in_chs, out_chs, kernel_size, stride=stride, padding=kernel_size // 2,
                              groups=groups, bias=False)

    def forward(self, x):
        return self.conv(self.act(self.bn(x)))


class InputBlock(nn.Module):
    def __init__(self, num_init_features, in_chans=3):
        super().__init__()
        self.conv = nn.Conv2d(in_chans, num_init_features, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(num_init_features, eps=BN_EPS)
        self.act = nn.ReLU()
        self.pool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        return self.pool(self.act(self.bn(self.conv(x))))


class DualPathBlock(nn.Module):
    def __init__(self, in_chs, num_1x1_a, num_3x3_b, num_1x1_c, inc, groups, block_type="normal",
                 stride_on_1x1=False, proj_relu=True):
        super().__init__()
        self.num_1x1_c, self.inc = num_1x1_c, inc
        if block_type == "proj":
            self.key_stride, self.has_proj = 1, True
        elif block_type == "down":
            self.key_stride, self.has_proj = 2, True
        else:
            self.key_stride, self.has_proj = 1, False
        self.c1x1_w_s1 = None
        self.c1x1_w_s2 = None
        if self.has_proj:
            if self.key_stride == 2:
                self.c1x1_w_s2 = BnActConv2d(in_chs, num_1x1_c + 2 * inc, 1, stride=2, act=proj_relu)
            else:
                self.c1x1_w_s1 = BnActConv2d(in_chs, num_1x1_c + 2 * inc, 1, stride=1, act=proj_relu)
        a_stride, b_stride = (self.key_stride, 1) if stride_on_1x1 else (1, self.key_stride)
        self.c1x1_a = BnActConv2d(in_chs, num_1x1_a, 1, stride=a_stride)
        self.c3x3_b = BnActConv2d(num_1x1_a, num_3x3_b, 3, stride=b_stride, groups=groups)
        self.c1x1_c = BnActConv2d(num_3x3_b, num_1x1_c + inc, 1)

    def forward(self, x):
        x_in = torch.cat(x, dim=1) if isinstance(x, tuple) else x
        if self.c1x1_w_s1 is None and self.c1x1_w_s2 is None:
            x_s1, x_s2 = x[0], x[1]
        else:
            x_s = self.c1x1_w_s1(x_in) if self.c1x1_w_s1 is not None else self.c1x1_w_s2(x_in)
            x_s1 = x_s[:, :self.num_1x1_c, :, :]
            x_s2 = x_s[:, self.num_1x1_c:, :, :]
        x_in = self.c1x1_a(x_in)
        x_in = self.c3x3_b(x_in)
        x_in = self.c1x1_c(x_in)
        out1 = x_in[:, :self.num_1x1_c, :, :]
        out2 = x_in[:, self.num_1x1_c:, :, :]
        resid = x_s1 + out1
        dense = torch.cat([x_s2, out2], dim=1)
        return resid, dense


class CatBnAct(nn.Module):
    def __init__(self, in_chs):
        super().__init__()
        self.bn = nn.BatchNorm2d(in_chs, eps=BN_EPS)
        self.act = nn.ReLU()

    def forward(self, x):
        x = torch.cat(x, dim=1) if isinstance(x, tuple) else x
        return self.act(self.bn(x))


class DPN(nn.Module):
    def __init__(self, stride_on_1x1=False, proj_relu=True):
        super().__init__()
        blocks = OrderedDict()
        blocks["conv1_1"] = InputBlock(NUM_INIT_FEATURES, IN_CHANS)
        in_chs = NUM_INIT_FEATURES
        for stage in range(2):
            r, bw, inc = K_R[stage], OUT_C[stage], INC_SEC[stage]
            first_type = "proj" if stage == 0 else "down"
            blocks[f"conv{stage + 2}_1"] = DualPathBlock(in_chs, r, r, bw, inc, GROUPS, first_type,
                                                         stride_on_1x1=stride_on_1x1, proj_relu=proj_relu)
            in_chs = bw + 3 * inc
            for i in range(2, K_SEC[stage] + 1):
                blocks[f"conv{stage + 2}_{i}"] = DualPathBlock(in_chs, r, r, bw, inc, GROUPS, "normal")
                in_chs += inc
        blocks["conv5_bn_ac"] = CatBnAct(in_chs)
        self.num_features = in_chs
        self.features = nn.Sequential(blocks)
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Conv2d(self.num_features, NUM_CLASSES, kernel_size=1, bias=True)

    def forward(self, x):
        x = self.features(x)
        x = self.global_pool(x)
        return self.classifier(x).flatten(1)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_dpn torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = DPN(stride_on_1x1=bug == "torch_stride_on_1x1", proj_relu=bug != "torch_proj_no_relu")
    return m.eval()


def _image():
    return np.random.default_rng(34).standard_normal((BATCH, IN_CHANS, SIZE, SIZE)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
