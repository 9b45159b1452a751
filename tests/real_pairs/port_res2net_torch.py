"""Hand-written port, torch side: a tiny Res2Net (v1b-style shortcut) CNN (written by "person B").

The same math as port_res2net_paddle.py, re-implemented by hand in the style of the official
Res2Net PyTorch code: input [2, 3, 16, 16] (positional), a 3x3 stem 3 -> 16, two layers of two
Bottle2neck blocks (16 -> 32 -> 32 at 16x16, then 32 -> 64 -> 64 at 8x8; width 4 / 8, scale 4),
global average pool, fc 64 -> 10. Output: logits [2, 10]. Eval mode.

Torch idioms on this side:
- root `Res2Net`: `conv1`, `bn1`, `relu` (nn.ReLU(inplace=True)), `layer1`, `layer2`
  (nn.Sequential of Bottle2neck), `avgpool` nn.AdaptiveAvgPool2d(1), `fc` nn.Linear(64, 10).
- `Bottle2neck` registers `downsample` FIRST (and calls it first, before the main path): an
  nn.Sequential(conv1x1, bn) for the stride-1 block, nn.Sequential(nn.AvgPool2d(2, 2,
  ceil_mode=True, count_include_pad=False), conv1x1, bn) for the stride-2 block (v1b style);
  then `conv1`, `bn1`, `split_convs`, `conv3`, `bn3`, `relu` (nn.ReLU(inplace=True), called twice
  per block). The residual is added in place: `out += identity`.
- The split path is a torch-only wrapper module `split_convs`:
  * `StageSplitConvs` (first block of a layer): the three independent split convs are ONE
    grouped nn.Conv2d(3w, 3w, 3, stride, groups=3) named `conv` with ONE BatchNorm2d(3w) `bn`
    (F.relu inline), and the last split goes through its `pool` nn.AvgPool2d(3, stride, 1)
    (count_include_pad=True, the torch default).
  * `HierarchicalSplitConvs` (other blocks): ModuleLists `convs` and `bns` (F.relu inline),
    sp = conv(sp + spx[i]) for i >= 1, the last split passed through.
- BN eps 1e-5 (torch default).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_no_hierarchy -> HierarchicalSplitConvs feeds each split conv its own split only
                        (sp = spx[i]) and forgets the previous split's output: the
                        hierarchical residual connection is gone (normal blocks only)
  torch_bn3_eps      -> Bottle2neck's bn3 is built with eps=1e-3 (a TF-style value) instead of
                        1e-5, in every block (precision-level)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

NUM_CLASSES = 10
BATCH = 2
OWN_BUGS = {"torch_no_hierarchy", "torch_bn3_eps"}
OTHER_BUGS = {"paddle_pool_exclusive", "paddle_short_no_pool"}


class StageSplitConvs(nn.Module):
    """First block of a layer: the scale - 1 split convs are independent -> one grouped conv."""

    def __init__(self, width, scale, stride):
        super().__init__()
        self.width, self.scale = width, scale
        n = width * (scale - 1)
        self.conv = nn.Conv2d(n, n, kernel_size=3, stride=stride, padding=1, groups=scale - 1, bias=False)
        self.bn = nn.BatchNorm2d(n)
        self.pool = nn.AvgPool2d(kernel_size=3, stride=stride, padding=1)

    def forward(self, x):
        n = self.width * (self.scale - 1)
        head, last = x[:, :n], x[:, n:]
        return torch.cat([F.relu(self.bn(self.conv(head))), self.pool(last)], dim=1)


class HierarchicalSplitConvs(nn.Module):
    def __init__(self, width, scale, no_hierarchy=False):
        super().__init__()
        self.width, self.scale, self.no_hierarchy = width, scale, no_hierarchy
        self.convs = nn.ModuleList(
            [nn.Conv2d(width, width, kernel_size=3, stride=1, padding=1, bias=False) for _ in range(scale - 1)])
        self.bns = nn.ModuleList([nn.BatchNorm2d(width) for _ in range(scale - 1)])

    def forward(self, x):
        spx = torch.split(x, self.width, dim=1)
        outs = []
        sp = None
        for i in range(self.scale - 1):
            if i == 0 or self.no_hierarchy:
                sp = spx[i]
            else:
                sp = sp + spx[i]
            sp = F.relu(self.bns[i](self.convs[i](sp)))
            outs.append(sp)
        outs.append(spx[self.scale - 1])
        return torch.cat(outs, dim=1)


class Bottle2neck(nn.Module):
    def __init__(self, inplanes, outplanes, width, scale, stride=1, stype="normal", bug=""):
        super().__init__()
        if stride != 1:
            self.downsample = nn.Sequential(
                nn.AvgPool2d(kernel_size=stride, stride=stride, ceil_mode=True, count_include_pad=False),
                nn.Conv2d(inplanes, outplanes, kernel_size=1, stride=1, bias=False),
                nn.BatchNorm2d(outplanes),
            )
        elif inplanes != outplanes:
            self.downsample = nn.Sequential(
                nn.Conv2d(inplanes, outplanes, kernel_size=1, stride=1, bias=False),
                nn.BatchNorm2d(outplanes),
            )
        else:
            self.downsample = None
        self.conv1 = nn.Conv2d(inplanes, width * scale, kernel_size=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width * scale)
        if stype == "stage":
            self.split_convs = StageSplitConvs(width, scale, stride)
        else:
            self.split_convs = HierarchicalSplitConvs(width, scale, no_hierarchy=bug == "torch_no_hierarchy")
        self.conv3 = nn.Conv2d(width * scale, outplanes, kernel_size=1, bias=False)
        self.bn3 = nn.BatchNorm2d(outplanes, eps=1e-3 if bug == "torch_bn3_eps" else 1e-5)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.split_convs(out)
        out = self.bn3(self.conv3(out))
        out += identity
        return self.relu(out)


class Res2Net(nn.Module):
    def __init__(self, scale=4, num_classes=NUM_CLASSES, bug=""):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = nn.Sequential(
            Bottle2neck(16, 32, 4, scale, stride=1, stype="stage", bug=bug),
            Bottle2neck(32, 32, 4, scale, bug=bug),
        )
        self.layer2 = nn.Sequential(
            Bottle2neck(32, 64, 8, scale, stride=2, stype="stage", bug=bug),
            Bottle2neck(64, 64, 8, scale, bug=bug),
        )
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(64, num_classes)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.fc(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_res2net torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = Res2Net(bug=bug if bug in OWN_BUGS else "")
    return m.eval()


def _image():
    rng = np.random.default_rng(42)
    return rng.standard_normal((BATCH, 3, 16, 16)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
