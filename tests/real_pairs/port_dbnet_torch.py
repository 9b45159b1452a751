"""Hand-written port, torch side: a tiny DBNet text detector, DBNet.pytorch style (written by "person B").

The same math as port_dbnet_paddle.py, re-implemented by hand: input image [2, 3, 64, 64]
(positional), output the probability / threshold / approximate binary maps concatenated on the
channel axis, [2, 3, 64, 64], binary = 1 / (1 + exp(-50 (P - T))).

Torch idioms on this side:
- root `DBModel`: `backbone` (`TinyResBackbone`), `fpn` (`FPNNeck`), `db_head` (`DBHeadTorch`).
- `TinyResBackbone`: `stem` = nn.Sequential(Conv2d, BatchNorm2d, ReLU) and `layer1`, `layer2`,
  `layer3` = nn.Sequential(Conv2d s2, BatchNorm2d, ReLU, Conv2d, BatchNorm2d, ReLU): BN and the
  activation are SEPARATE modules; the forward returns the tuple (c2, c3, c4).
- `FPNNeck`: `lateral_convs` = ModuleList of 1x1 convs and `smooth_convs` = ModuleList of 3x3
  convs, both LOW level first (index 0 = C2 / P2); the top-down path and the final resizing are
  F.interpolate(mode="nearest") inline; concat order [p4, p3, p2].
- `DBHeadTorch`: `binarize` and `thresh` = nn.Sequential(Conv2d, BatchNorm2d, ReLU,
  ConvTranspose2d, BatchNorm2d, ReLU, ConvTranspose2d, Sigmoid) (numbered children); the step
  function is inline torch code in the head's forward, k = 50 a plain attribute.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_thresh_no_sigmoid -> the threshold branch Sequential is built without its final
                             nn.Sigmoid, so T is the raw ConvTranspose output
  torch_step_swapped      -> the inline step function computes 1 / (1 + exp(-k (T - P))) (the
                             two maps swapped)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

BATCH = 2
OWN_BUGS = {"torch_thresh_no_sigmoid", "torch_step_swapped"}
OTHER_BUGS = {"paddle_head_bn_eps", "paddle_topdown_bilinear"}


def conv_bn_relu(cin, cout, stride):
    return [nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]


class TinyResBackbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(*conv_bn_relu(3, 8, 2))
        self.layer1 = nn.Sequential(*conv_bn_relu(8, 8, 2), *conv_bn_relu(8, 8, 1))
        self.layer2 = nn.Sequential(*conv_bn_relu(8, 16, 2), *conv_bn_relu(16, 16, 1))
        self.layer3 = nn.Sequential(*conv_bn_relu(16, 32, 2), *conv_bn_relu(32, 32, 1))

    def forward(self, x):
        x = self.stem(x)
        c2 = self.layer1(x)
        c3 = self.layer2(c2)
        c4 = self.layer3(c3)
        return c2, c3, c4


class FPNNeck(nn.Module):
    def __init__(self, in_channels=(8, 16, 32), inner_channels=16):
        super().__init__()
        self.lateral_convs = nn.ModuleList([nn.Conv2d(c, inner_channels, 1, bias=False) for c in in_channels])
        self.smooth_convs = nn.ModuleList(
            [nn.Conv2d(inner_channels, inner_channels // 4, 3, padding=1, bias=False) for _ in in_channels]
        )

    def forward(self, feats):
        c2, c3, c4 = feats
        l2 = self.lateral_convs[0](c2)
        l3 = self.lateral_convs[1](c3)
        l4 = self.lateral_convs[2](c4)
        l3 = l3 + F.interpolate(l4, size=l3.shape[-2:], mode="nearest")
        l2 = l2 + F.interpolate(l3, size=l2.shape[-2:], mode="nearest")
        p2 = self.smooth_convs[0](l2)
        p3 = self.smooth_convs[1](l3)
        p4 = self.smooth_convs[2](l4)
        size = p2.shape[-2:]
        p3 = F.interpolate(p3, size=size, mode="nearest")
        p4 = F.interpolate(p4, size=size, mode="nearest")
        return torch.cat([p4, p3, p2], dim=1)


def _branch(cin, sigmoid=True):
    mid = cin // 4
    layers = [
        nn.Conv2d(cin, mid, 3, padding=1, bias=False),
        nn.BatchNorm2d(mid),
        nn.ReLU(inplace=True),
        nn.ConvTranspose2d(mid, mid, 2, 2),
        nn.BatchNorm2d(mid),
        nn.ReLU(inplace=True),
        nn.ConvTranspose2d(mid, 1, 2, 2),
    ]
    if sigmoid:
        layers.append(nn.Sigmoid())
    return nn.Sequential(*layers)


class DBHeadTorch(nn.Module):
    def __init__(self, in_channels=12, k=50, thresh_sigmoid=True, swapped=False):
        super().__init__()
        self.k = k
        self.swapped = swapped
        self.binarize = _branch(in_channels)
        self.thresh = _branch(in_channels, sigmoid=thresh_sigmoid)

    def forward(self, x):
        prob = self.binarize(x)
        thr = self.thresh(x)
        diff = thr - prob if self.swapped else prob - thr
        binary = torch.reciprocal(1 + torch.exp(-self.k * diff))
        return torch.cat((prob, thr, binary), dim=1)


class DBModel(nn.Module):
    def __init__(self, thresh_sigmoid=True, swapped=False):
        super().__init__()
        self.backbone = TinyResBackbone()
        self.fpn = FPNNeck()
        self.db_head = DBHeadTorch(12, 50, thresh_sigmoid, swapped)

    def forward(self, img):
        return self.db_head(self.fpn(self.backbone(img)))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_dbnet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = DBModel(thresh_sigmoid=bug != "torch_thresh_no_sigmoid", swapped=bug == "torch_step_swapped")
    return m.eval()


def _image():
    rng = np.random.default_rng(31)
    return rng.standard_normal((BATCH, 3, 64, 64)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # DB maps [2, 3, 64, 64]
    return (output**2).mean()
