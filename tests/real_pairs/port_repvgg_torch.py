"""Hand-written port, torch side: a tiny RepVGG-style classifier with training-time blocks (written by "person B").

The same math as port_repvgg_paddle.py, re-implemented by hand in the style of timm's
RepVGG / ByobNet code: input x [2, 3, 32, 32] (positional), output logits [2, 10].
Block: act(sum of the branches), branches = 3x3 conv+BN (padding 1), 1x1 conv+BN (padding 0),
and an identity BN only where in == out and stride == 1. Widths 8 / 16 / 32, stages of
1 / 2 / 3 blocks, the first block of each stage with stride 2; global average pool; Linear(32, 10).

Torch idioms on this side:
- root `RepVggNet`: `stem` (one RepVggBlock, 3 -> 8, stride 2), `stages` = nn.ModuleList of
  two nn.Sequential stages (iterated, never called itself), `head` (ClassifierHead).
- `RepVggBlock` keeps ALL its branches in ONE nn.ModuleDict `branches`, inserted in the order
  "identity" (nn.BatchNorm2d, only when in == out and stride == 1), "conv_kxk", "conv_1x1"; the
  forward sums `branch(x) for branch in self.branches.values()`; then its `act` module
  (act_layer(), nn.ReLU by default), registered after the branches.
- `ConvBn` is an nn.Sequential subclass with named children `conv` (nn.Conv2d, bias=False)
  and `bn` (nn.BatchNorm2d), called as a Sequential.
- `ClassifierHead`: global pooling inline in its forward (x.mean((2, 3)) for pool_type "avg",
  x.amax((2, 3)) for "max"), then its `fc` nn.Linear(32, 10).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_head_max_pool -> the head is built with pool_type="max" (timm's option string), so the
                         global pool takes the spatial max instead of the mean
  torch_act_silu      -> the blocks are built with act_layer=nn.SiLU (the YOLOv6 / v7 RepConv
                         default) instead of nn.ReLU, in every block
"""
import os

import numpy as np
import torch
from torch import nn

NUM_CLASSES = 10
BATCH = 2
OWN_BUGS = {"torch_head_max_pool", "torch_act_silu"}
OTHER_BUGS = {"paddle_id_bn_eps", "paddle_id_after_relu"}


class ConvBn(nn.Sequential):
    def __init__(self, in_chs, out_chs, kernel_size, stride=1):
        super().__init__()
        self.add_module("conv", nn.Conv2d(in_chs, out_chs, kernel_size, stride=stride,
                                          padding=kernel_size // 2, bias=False))
        self.add_module("bn", nn.BatchNorm2d(out_chs))


class RepVggBlock(nn.Module):
    def __init__(self, in_chs, out_chs, stride=1, act_layer=nn.ReLU):
        super().__init__()
        self.branches = nn.ModuleDict()
        if in_chs == out_chs and stride == 1:
            self.branches["identity"] = nn.BatchNorm2d(out_chs)
        self.branches["conv_kxk"] = ConvBn(in_chs, out_chs, 3, stride)
        self.branches["conv_1x1"] = ConvBn(in_chs, out_chs, 1, stride)
        self.act = act_layer()

    def forward(self, x):
        out = None
        for branch in self.branches.values():
            y = branch(x)
            out = y if out is None else out + y
        return self.act(out)


class ClassifierHead(nn.Module):
    def __init__(self, in_features, num_classes, pool_type="avg"):
        super().__init__()
        self.pool_type = pool_type
        self.fc = nn.Linear(in_features, num_classes)

    def forward(self, x):
        if self.pool_type == "max":
            x = x.amax(dim=(2, 3))
        else:
            x = x.mean(dim=(2, 3))
        return self.fc(x)


class RepVggNet(nn.Module):
    def __init__(self, widths=(8, 16, 32), depths=(2, 3), num_classes=NUM_CLASSES, act_layer=nn.ReLU,
                 pool_type="avg"):
        super().__init__()
        self.stem = RepVggBlock(3, widths[0], stride=2, act_layer=act_layer)
        stages = []
        prev = widths[0]
        for width, depth in zip(widths[1:], depths):
            blocks = []
            for i in range(depth):
                blocks.append(RepVggBlock(prev, width, stride=2 if i == 0 else 1, act_layer=act_layer))
                prev = width
            stages.append(nn.Sequential(*blocks))
        self.stages = nn.ModuleList(stages)
        self.head = ClassifierHead(prev, num_classes, pool_type=pool_type)

    def forward(self, x):
        x = self.stem(x)
        for stage in self.stages:
            x = stage(x)
        return self.head(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_repvgg torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = RepVggNet(act_layer=nn.SiLU if bug == "torch_act_silu" else nn.ReLU,
                  pool_type="max" if bug == "torch_head_max_pool" else "avg")
    return m.eval()


def _image():
    rng = np.random.default_rng(31)
    return rng.standard_normal((BATCH, 3, 32, 32)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
