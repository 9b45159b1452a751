"""Hand-written port, torch side: a tiny Deep Layer Aggregation classifier, ucbdrive/dla style (written by "person B").

The same math as port_dla_paddle.py, re-implemented by hand after the reference dla.py: image
[2, 3, 32, 32] (positional) -> logits [2, 10]. levels (1, 1, 1, 2), channels (8, 8, 16, 24, 32).

Torch idioms on this side: the hierarchy is RECURSIVE.
- root `DLA`: `base_layer` nn.Sequential(7x7 conv, BN, nn.ReLU(inplace=True)), `level0`,
  `level1` (nn.Sequential conv / BN / ReLU(inplace) levels, indices 0, 1, 2), `level2` =
  Tree(levels=1, 16 -> 24, stride 2), `level3` = Tree(levels=2, 24 -> 32, stride 2,
  level_root=True, root_residual=True), `avgpool` nn.AdaptiveAvgPool2d(1), `fc` =
  nn.Conv2d(32, 10, 1) (a 1x1 conv classifier, as in dla.py), flattened by view.
- `Tree(levels, in, out, stride, level_root, root_dim, root_residual)`:
    levels == 1: tree1 = BasicBlock(in, out, stride), tree2 = BasicBlock(out, out), root =
                 Root(root_dim, out)
    levels > 1:  tree1 = Tree(levels - 1, in, out, stride), tree2 = Tree(levels - 1, out, out,
                 root_dim=root_dim + out)   (nested Tree objects, no root of its own)
  then `downsample` nn.MaxPool2d(stride, stride) when stride > 1, `project`
  nn.Sequential(1x1 conv, BN) only for a levels == 1 tree whose width changes. forward(x,
  residual=None, children=None): bottom = downsample(x); residual = project(bottom);
  children.append(bottom) if level_root; levels == 1: root(tree2(x1), x1, *children) with
  x1 = tree1(x, residual); else tree2(tree1(x), children=children + [x1]).
  So level3 calls its own `downsample` AND level3.tree1.downsample on the same input.
- `BasicBlock`: `conv1`, `bn1`, `relu` (nn.ReLU(inplace=True), called twice), `conv2`, `bn2`;
  `out += residual` in place.
- `Root`: `conv` (1x1, no bias), `bn`, `relu` (inplace); forward(*x): cat, conv, bn,
  `x += children[0]` in place when residual, relu.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_block_residual_after_relu -> BasicBlock applies the final ReLU before adding the
                                     residual (relu(bn2(...)) + residual, no ReLU after the
                                     add), in every block
  torch_root_bn_eps               -> Root builds its BatchNorm2d with eps=1e-3 (copied from a
                                     detection codebase) instead of the default 1e-5
"""
import functools
import os

import numpy as np
import torch
from torch import nn

BATCH, IMG, NUM_CLASSES = 2, 32, 10
OWN_BUGS = {"torch_block_residual_after_relu", "torch_root_bn_eps"}
OTHER_BUGS = {"paddle_agg_children_order", "paddle_downsample_avgpool"}


class BasicBlock(nn.Module):
    def __init__(self, inplanes, planes, stride=1, relu_before_add=False):
        super().__init__()
        self.relu_before_add = relu_before_add
        self.conv1 = nn.Conv2d(inplanes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)

    def forward(self, x, residual=None):
        if residual is None:
            residual = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        if self.relu_before_add:
            out = self.relu(out)
            out += residual
            return out
        out += residual
        out = self.relu(out)
        return out


class Root(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=1, residual=False, bn_eps=1e-5):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=1, bias=False,
                              padding=(kernel_size - 1) // 2)
        self.bn = nn.BatchNorm2d(out_channels, eps=bn_eps)
        self.relu = nn.ReLU(inplace=True)
        self.residual = residual

    def forward(self, *x):
        children = x
        x = self.conv(torch.cat(x, 1))
        x = self.bn(x)
        if self.residual:
            x += children[0]
        x = self.relu(x)
        return x


class Tree(nn.Module):
    def __init__(self, levels, block, in_channels, out_channels, stride=1, level_root=False, root_dim=0,
                 root_kernel_size=1, root_residual=False, root_bn_eps=1e-5):
        super().__init__()
        if root_dim == 0:
            root_dim = 2 * out_channels
        if level_root:
            root_dim += in_channels
        if levels == 1:
            self.tree1 = block(in_channels, out_channels, stride)
            self.tree2 = block(out_channels, out_channels, 1)
        else:
            self.tree1 = Tree(levels - 1, block, in_channels, out_channels, stride, root_dim=0,
                              root_kernel_size=root_kernel_size, root_residual=root_residual,
                              root_bn_eps=root_bn_eps)
            self.tree2 = Tree(levels - 1, block, out_channels, out_channels, root_dim=root_dim + out_channels,
                              root_kernel_size=root_kernel_size, root_residual=root_residual,
                              root_bn_eps=root_bn_eps)
        if levels == 1:
            self.root = Root(root_dim, out_channels, root_kernel_size, root_residual, bn_eps=root_bn_eps)
        self.level_root = level_root
        self.root_dim = root_dim
        self.downsample = None
        self.project = None
        self.levels = levels
        if stride > 1:
            self.downsample = nn.MaxPool2d(stride, stride=stride)
        if in_channels != out_channels and levels == 1:
            self.project = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=1, bias=False),
                nn.BatchNorm2d(out_channels),
            )

    def forward(self, x, residual=None, children=None):
        children = [] if children is None else children
        bottom = self.downsample(x) if self.downsample else x
        residual = self.project(bottom) if self.project else bottom
        if self.level_root:
            children.append(bottom)
        x1 = self.tree1(x, residual)
        if self.levels == 1:
            x2 = self.tree2(x1)
            x = self.root(x2, x1, *children)
        else:
            children.append(x1)
            x = self.tree2(x1, children=children)
        return x


def _make_conv_level(inplanes, planes, convs, stride=1):
    modules = []
    for i in range(convs):
        modules.extend([
            nn.Conv2d(inplanes, planes, kernel_size=3, stride=stride if i == 0 else 1, padding=1, bias=False),
            nn.BatchNorm2d(planes),
            nn.ReLU(inplace=True),
        ])
        inplanes = planes
    return nn.Sequential(*modules)


class DLA(nn.Module):
    def __init__(self, levels=(1, 1, 1, 2), channels=(8, 8, 16, 24, 32), num_classes=NUM_CLASSES, block=BasicBlock,
                 root_bn_eps=1e-5):
        super().__init__()
        self.channels = channels
        self.base_layer = nn.Sequential(
            nn.Conv2d(3, channels[0], kernel_size=7, stride=1, padding=3, bias=False),
            nn.BatchNorm2d(channels[0]),
            nn.ReLU(inplace=True),
        )
        self.level0 = _make_conv_level(channels[0], channels[1], levels[0])
        self.level1 = _make_conv_level(channels[1], channels[2], levels[1], stride=2)
        self.level2 = Tree(levels[2], block, channels[2], channels[3], 2, level_root=False, root_residual=False,
                           root_bn_eps=root_bn_eps)
        self.level3 = Tree(levels[3], block, channels[3], channels[4], 2, level_root=True, root_residual=True,
                           root_bn_eps=root_bn_eps)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Conv2d(channels[-1], num_classes, kernel_size=1, stride=1, padding=0, bias=True)

    def forward(self, x):
        x = self.base_layer(x)
        for i in range(4):
            x = getattr(self, f"level{i}")(x)
        x = self.avgpool(x)
        x = self.fc(x)
        return x.view(x.size(0), -1)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_dla torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    block = BasicBlock
    if bug == "torch_block_residual_after_relu":
        block = functools.partial(BasicBlock, relu_before_add=True)
    return DLA(block=block, root_bn_eps=1e-3 if bug == "torch_root_bn_eps" else 1e-5).eval()


def _image():
    return np.random.default_rng(34).standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
