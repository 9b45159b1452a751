"""Hand-written port, torch side: the same tiny ConvNeXt re-implemented in PyTorch by a second
person, timm-style. 32x32 RGB in, widths 32 / 64, 2 + 2 blocks, 10 classes.

Torch idioms on this side: a `stem` Sequential (Conv2d 4x4 stride 4 + `LayerNorm2d`), `stages`
as an nn.Sequential of `ConvNeXtStage`, each owning its own `downsample` (None in stage 0,
LayerNorm2d + Conv2d 2x2 stride 2 in stage 1) and its `blocks`; `LayerNorm2d` is an
nn.LayerNorm subclass that permutes NCHW -> NHWC, calls F.layer_norm and permutes back. Inside a
block the tensor is permuted to NHWC after the depthwise conv (`conv_dw`), normalised with a plain
nn.LayerNorm and sent through an `Mlp` of nn.Linear (`fc1`, `act`, `fc2`, weights [out, in]),
then scaled by the layer scale `ls` (shape [C], registered first in the block) and permuted back
to NCHW. The classifier is a `head` module (`ClassifierHead`) that does the pooling itself, then
`norm` and `fc`. All norms use eps 1e-6.

Planted bugs (PADIFF_BUG): see port_convnext_truth.json; the paddle side's bug names are
accepted and ignored, any other name raises.
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IMG, DIMS, DEPTHS, CLASSES = 32, (32, 64), (2, 2), 10

TORCH_BUGS = ("no_layer_scale", "ds_permute")
PADDLE_BUGS = ("paddle_ln_eps",)


class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over the channels of an NCHW tensor (permute, F.layer_norm, permute back)."""

    def __init__(self, num_channels, eps=1e-6):
        super().__init__(num_channels, eps=eps)
        self.swap_hw = False  # PADIFF_BUG=ds_permute

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        if self.swap_hw:
            return x.permute(0, 3, 2, 1)  # typo: H and W come back swapped
        return x.permute(0, 3, 1, 2)


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim, ls_init_value=1e-6, mlp_ratio=4):
        super().__init__()
        self.ls = nn.Parameter(ls_init_value * torch.ones(dim))
        self.conv_dw = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = Mlp(dim, mlp_ratio * dim)
        self.use_ls = True  # PADIFF_BUG=no_layer_scale

    def forward(self, x):
        shortcut = x
        x = self.conv_dw(x)
        x = x.permute(0, 2, 3, 1)  # NCHW -> NHWC
        x = self.mlp(self.norm(x))
        if self.use_ls:
            x = x * self.ls
        x = x.permute(0, 3, 1, 2)  # NHWC -> NCHW
        return shortcut + x


class ConvNeXtStage(nn.Module):
    def __init__(self, in_chs, out_chs, depth):
        super().__init__()
        if in_chs != out_chs:
            self.downsample = nn.Sequential(
                LayerNorm2d(in_chs), nn.Conv2d(in_chs, out_chs, kernel_size=2, stride=2))
        else:
            self.downsample = None
        self.blocks = nn.Sequential(*[ConvNeXtBlock(out_chs) for _ in range(depth)])

    def forward(self, x):
        if self.downsample is not None:
            x = self.downsample(x)
        return self.blocks(x)


class ClassifierHead(nn.Module):
    def __init__(self, dim, num_classes):
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.fc = nn.Linear(dim, num_classes)

    def forward(self, x):
        return self.fc(self.norm(x.mean(dim=(2, 3))))


class ConvNeXt(nn.Module):
    def __init__(self, in_chans=3, num_classes=CLASSES, dims=DIMS, depths=DEPTHS):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(in_chans, dims[0], kernel_size=4, stride=4), LayerNorm2d(dims[0]))
        chs = [dims[0], *dims]
        self.stages = nn.Sequential(*[ConvNeXtStage(chs[i], chs[i + 1], depths[i]) for i in range(len(dims))])
        self.head = ClassifierHead(dims[-1], num_classes)

    def forward(self, x):
        return self.head(self.stages(self.stem(x)))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in TORCH_BUGS + PADDLE_BUGS:
        raise ValueError(f"port_convnext: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = ConvNeXt().eval()
    if bug == "no_layer_scale":
        # stage 0's second block adds the MLP branch without multiplying it by the layer scale
        m.stages[0].blocks[1].use_ls = False
    elif bug == "ds_permute":
        # stage 1's downsample LayerNorm2d permutes back with (0, 3, 2, 1) instead of (0, 3, 1, 2)
        m.stages[1].downsample[0].swap_hw = True
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, IMG, IMG)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    # logits [2, 10] of a Linear on the LayerNormed pooled features: a mean of squares depends on all of it
    return (output**2).mean()
