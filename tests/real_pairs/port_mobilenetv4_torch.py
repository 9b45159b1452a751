"""Hand-written port, torch side: a tiny MobileNetV4 (hybrid) classifier (written by "person B").

The same math as port_mobilenetv4_paddle.py, re-implemented by hand in the style of timm's
mobilenetv3.py / _efficientnet_blocks.py: images [2, 3, 32, 32] (positional) -> logits [2, 10].
Stem conv 3x3 s2 + BN + relu; stage 0: UIB ExtraDW (16 -> 24, s2); stage 1: UIB ConvNeXt-like
(24 -> 24, layer scale, skip), UIB IB (24 -> 32, s2); stage 2: Mobile MQA (32, 4 query heads of
8, one key / value head of 8, kv stride 2, layer scale, skip), UIB FFN (32 -> 32, layer scale,
skip); head: global pool -> conv 1x1 (32 -> 64) -> BN -> relu -> flatten -> Linear(64, 10).

Torch idioms on this side:
- root `MobileNetV4Hybrid`: `conv_stem`, `bn1`, `act1` (nn.ReLU), `blocks` (nn.Sequential of
  three stage nn.Sequentials: [1, 2, 2] blocks), `global_pool` (nn.AdaptiveAvgPool2d(1)),
  `conv_head`, `norm_head`, `act2` (nn.ReLU), `flatten` (nn.Flatten), `classifier`.
- `UniversalInvertedResidual`: `dw_start`, `pw_exp`, `dw_mid`, `pw_proj` are `ConvNormAct`
  modules (`conv`, `bn`, `act` = nn.ReLU or nn.Identity); an unused start / middle dw is an
  nn.Identity; `layer_scale` is a `LayerScale2d` (gamma [C, 1, 1]) or nn.Identity.
- `MobileAttention`: `norm` (BN), `attn` (`MultiQueryAttention2d`), `layer_scale`.
- `MultiQueryAttention2d`: `query` = Sequential(proj), `key` = Sequential(down_conv, norm, proj),
  `value` = Sequential(down_conv, norm, proj), `output` = Sequential(proj): the key and the value
  each have their OWN strided dw down conv and BN (timm's layout), and the logits are an einsum.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_start_dw_stride        -> the UIB constructor puts the stride on `dw_start` even when the
                                  block has a middle dw (which then gets stride 1): the ExtraDW
                                  block downsamples BEFORE the expansion
  torch_layer_scale_after_skip -> UIB forward applies the layer scale after the residual add,
                                  gamma * (shortcut + f(x)), instead of shortcut + gamma * f(x)
"""
import os
from collections import OrderedDict

import numpy as np
import torch
from torch import nn

OWN_BUGS = {"torch_start_dw_stride", "torch_layer_scale_after_skip"}
OTHER_BUGS = {"paddle_expand_bn_eps", "paddle_mqa_scale_heads"}


class ConvNormAct(nn.Module):
    def __init__(self, in_chs, out_chs, kernel_size, stride=1, groups=1, apply_act=True):
        super().__init__()
        self.conv = nn.Conv2d(in_chs, out_chs, kernel_size, stride, padding=(kernel_size - 1) // 2,
                              groups=groups, bias=False)
        self.bn = nn.BatchNorm2d(out_chs)
        self.act = nn.ReLU() if apply_act else nn.Identity()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class LayerScale2d(nn.Module):
    def __init__(self, dim, init_values=1e-5):
        super().__init__()
        self.gamma = nn.Parameter(init_values * torch.ones(dim, 1, 1))

    def forward(self, x):
        return x * self.gamma


class UniversalInvertedResidual(nn.Module):
    def __init__(self, in_chs, out_chs, dw_kernel_size_start=0, dw_kernel_size_mid=0, stride=1,
                 exp_ratio=1.0, layer_scale_init_value=None, stride_on_start=False, ls_after_skip=False):
        super().__init__()
        self.has_skip = in_chs == out_chs and stride == 1
        self.ls_after_skip = ls_after_skip
        mid_chs = int(in_chs * exp_ratio)
        if dw_kernel_size_start:
            dw_start_stride = stride if (stride_on_start or not dw_kernel_size_mid) else 1
            self.dw_start = ConvNormAct(in_chs, in_chs, dw_kernel_size_start, stride=dw_start_stride,
                                        groups=in_chs, apply_act=False)
        else:
            self.dw_start = nn.Identity()
        self.pw_exp = ConvNormAct(in_chs, mid_chs, 1)
        if dw_kernel_size_mid:
            mid_stride = 1 if stride_on_start and dw_kernel_size_start else stride
            self.dw_mid = ConvNormAct(mid_chs, mid_chs, dw_kernel_size_mid, stride=mid_stride, groups=mid_chs)
        else:
            self.dw_mid = nn.Identity()
        self.pw_proj = ConvNormAct(mid_chs, out_chs, 1, apply_act=False)
        if layer_scale_init_value is not None:
            self.layer_scale = LayerScale2d(out_chs, layer_scale_init_value)
        else:
            self.layer_scale = nn.Identity()

    def forward(self, x):
        shortcut = x
        x = self.dw_start(x)
        x = self.pw_exp(x)
        x = self.dw_mid(x)
        x = self.pw_proj(x)
        if self.ls_after_skip:
            if self.has_skip:
                x = x + shortcut
            return self.layer_scale(x)
        x = self.layer_scale(x)
        if self.has_skip:
            x = x + shortcut
        return x


class MultiQueryAttention2d(nn.Module):
    def __init__(self, dim, num_heads=4, key_dim=8, value_dim=8, kv_stride=2):
        super().__init__()
        self.num_heads, self.key_dim, self.value_dim = num_heads, key_dim, value_dim
        self.scale = key_dim**-0.5
        self.query = nn.Sequential(OrderedDict(proj=nn.Conv2d(dim, num_heads * key_dim, 1, bias=False)))
        self.key = nn.Sequential(OrderedDict(
            down_conv=nn.Conv2d(dim, dim, 3, stride=kv_stride, padding=1, groups=dim, bias=False),
            norm=nn.BatchNorm2d(dim),
            proj=nn.Conv2d(dim, key_dim, 1, bias=False),
        ))
        self.value = nn.Sequential(OrderedDict(
            down_conv=nn.Conv2d(dim, dim, 3, stride=kv_stride, padding=1, groups=dim, bias=False),
            norm=nn.BatchNorm2d(dim),
            proj=nn.Conv2d(dim, value_dim, 1, bias=False),
        ))
        self.output = nn.Sequential(OrderedDict(proj=nn.Conv2d(num_heads * value_dim, dim, 1, bias=False)))

    def forward(self, x):
        B, _C, H, W = x.shape
        q = self.query(x).view(B, self.num_heads, self.key_dim, H * W)  # b h d n
        k = self.key(x).flatten(2)  # b d m
        v = self.value(x).flatten(2)  # b e m
        attn = torch.einsum("bhdn,bdm->bhnm", q, k) * self.scale
        attn = attn.softmax(dim=-1)
        o = torch.einsum("bhnm,bem->bhen", attn, v)  # b h e n
        o = o.reshape(B, self.num_heads * self.value_dim, H, W)
        return self.output(o)


class MobileAttention(nn.Module):
    def __init__(self, dim, num_heads, key_dim, kv_stride, layer_scale_init_value=1e-5):
        super().__init__()
        self.norm = nn.BatchNorm2d(dim)
        self.attn = MultiQueryAttention2d(dim, num_heads, key_dim, key_dim, kv_stride)
        self.layer_scale = LayerScale2d(dim, layer_scale_init_value)

    def forward(self, x):
        return x + self.layer_scale(self.attn(self.norm(x)))


class MobileNetV4Hybrid(nn.Module):
    def __init__(self, num_classes=10, stride_on_start=False, ls_after_skip=False):
        super().__init__()
        kw = dict(stride_on_start=stride_on_start, ls_after_skip=ls_after_skip)
        self.conv_stem = nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.act1 = nn.ReLU()
        self.blocks = nn.Sequential(
            nn.Sequential(UniversalInvertedResidual(16, 24, 3, 3, 2, 3.0, **kw)),
            nn.Sequential(
                UniversalInvertedResidual(24, 24, 5, 0, 1, 2.0, layer_scale_init_value=1e-5, **kw),
                UniversalInvertedResidual(24, 32, 0, 3, 2, 2.0, **kw),
            ),
            nn.Sequential(
                MobileAttention(32, num_heads=4, key_dim=8, kv_stride=2),
                UniversalInvertedResidual(32, 32, 0, 0, 1, 2.0, layer_scale_init_value=1e-5, **kw),
            ),
        )
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.conv_head = nn.Conv2d(32, 64, 1, bias=False)
        self.norm_head = nn.BatchNorm2d(64)
        self.act2 = nn.ReLU()
        self.flatten = nn.Flatten(1)
        self.classifier = nn.Linear(64, num_classes)

    def forward(self, x):
        x = self.act1(self.bn1(self.conv_stem(x)))
        x = self.blocks(x)
        x = self.global_pool(x)
        x = self.act2(self.norm_head(self.conv_head(x)))
        return self.classifier(self.flatten(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_mobilenetv4 torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = MobileNetV4Hybrid(stride_on_start=bug == "torch_start_dw_stride",
                          ls_after_skip=bug == "torch_layer_scale_after_skip")
    return m.eval()


def _images():
    rng = np.random.default_rng(11)
    return rng.standard_normal((2, 3, 32, 32)).astype("float32")


def inputs():
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
