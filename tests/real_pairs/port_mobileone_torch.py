"""Hand-written port, torch side: a MobileOne-style CNN in its train-time (un-reparameterized) form (written by "person B").

The same math as port_mobileone_paddle.py, re-implemented by hand: input `x` [1, 3, 32, 32]
(positional, numpy rng seed 4502), output class logits [1, 5]. A unit computes
relu(sum of k x k conv-BN branches + 1x1 conv-BN "scale" branch + identity BN), the scale branch
only for k > 1 and the identity BN only when in == out channels and stride 1.

Torch idioms on this side:
- root `MobileOne`: `stem` (MobileOneUnit 3 -> 8, 3x3, stride 2, one branch), `stages` =
  nn.Sequential of two `DepthwiseSeparable` modules (8 -> 16 stride 2, 16 -> 16 stride 1), each
  registering `dw` (3x3 depthwise unit, 2 branches) and `pw` (1x1 unit, 2 branches); `head`
  (ClassifierHead: the global average pool is inline x.mean((2, 3)), then its `fc`
  nn.Linear(16, 5)).
- `ConvBN`: a small module with `conv` (bias=False) and `bn`.
- `MobileOneUnit` registers `scale` FIRST (ConvBN 1x1, or None for k = 1), then the conv
  branches as NAMED attributes `kxk_a` and `kxk_b` (`kxk_b` = None for a one-branch unit),
  then `identity` (nn.BatchNorm2d, or None where the shapes forbid it). The forward sums
  kxk_a + kxk_b + scale + identity, in that order, and applies F.relu inline (no activation
  module).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_branch_copy_paste -> copy-paste typo in MobileOneUnit.forward: the second branch term
                             calls kxk_a again (out = out + self.kxk_a(x)) instead of kxk_b, in
                             every two-branch unit
  torch_head_maxpool      -> ClassifierHead pools with x.amax((2, 3)) (global max) instead of
                             x.mean((2, 3))
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

NUM_CLASSES = 5
OWN_BUGS = {"torch_branch_copy_paste", "torch_head_maxpool"}
OTHER_BUGS = {"paddle_skip_bn_eps", "paddle_branch_assign"}


class ConvBN(nn.Module):
    def __init__(self, cin, cout, k, stride, groups):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, groups=groups, bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return self.bn(self.conv(x))


class MobileOneUnit(nn.Module):
    def __init__(self, cin, cout, k, stride=1, depthwise=False, branches=2, copy_paste=False):
        super().__init__()
        assert branches in (1, 2)
        groups = cin if depthwise else 1
        self.copy_paste = copy_paste
        self.scale = ConvBN(cin, cout, 1, stride, groups) if k > 1 else None
        self.kxk_a = ConvBN(cin, cout, k, stride, groups)
        self.kxk_b = ConvBN(cin, cout, k, stride, groups) if branches == 2 else None
        self.identity = nn.BatchNorm2d(cin) if (cin == cout and stride == 1) else None

    def forward(self, x):
        out = self.kxk_a(x)
        if self.kxk_b is not None:
            out = out + (self.kxk_a(x) if self.copy_paste else self.kxk_b(x))
        if self.scale is not None:
            out = out + self.scale(x)
        if self.identity is not None:
            out = out + self.identity(x)
        return F.relu(out)


class DepthwiseSeparable(nn.Module):
    def __init__(self, cin, cout, stride, copy_paste=False):
        super().__init__()
        self.dw = MobileOneUnit(cin, cin, 3, stride, depthwise=True, branches=2, copy_paste=copy_paste)
        self.pw = MobileOneUnit(cin, cout, 1, 1, branches=2, copy_paste=copy_paste)

    def forward(self, x):
        return self.pw(self.dw(x))


class ClassifierHead(nn.Module):
    def __init__(self, cin, num_classes, max_pool=False):
        super().__init__()
        self.max_pool = max_pool
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x):
        x = x.amax((2, 3)) if self.max_pool else x.mean((2, 3))
        return self.fc(x)


class MobileOne(nn.Module):
    def __init__(self, bug=""):
        super().__init__()
        cp = bug == "torch_branch_copy_paste"
        self.stem = MobileOneUnit(3, 8, 3, stride=2, branches=1, copy_paste=cp)
        self.stages = nn.Sequential(DepthwiseSeparable(8, 16, 2, cp), DepthwiseSeparable(16, 16, 1, cp))
        self.head = ClassifierHead(16, NUM_CLASSES, max_pool=bug == "torch_head_maxpool")

    def forward(self, x):
        return self.head(self.stages(self.stem(x)))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_mobileone torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = MobileOne(bug if bug in OWN_BUGS else "")
    return m.eval()


def _image():
    rng = np.random.default_rng(4502)
    return rng.standard_normal((1, 3, 32, 32)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # class logits [1, 5]
    return (output**2).mean()
