"""Hand-written port, torch side: a tiny DeepLabV3 segmentation model with an ASPP head (written by "person B").

The same math as port_deeplab_aspp_paddle.py, re-implemented by hand in the torchvision
(segmentation.deeplabv3) style: input x [2, 3, 32, 32] (positional), a three-conv backbone to a
[2, 16, 8, 8] feature map, a DeepLabHead (ASPP with rates 2 / 3, 12 channels, 3x3 conv, 1x1
classifier to 5 classes), then a bilinear x4 upsample. Output: an OrderedDict {"out": logits
[2, 5, 32, 32]} (torchvision style). BN eps is 1e-3 everywhere (Keras checkpoint).

Torch idioms on this side:
- root `DeepLabV3`: `backbone` (`TinyBackbone`), `classifier` (`DeepLabHead`, an nn.Sequential:
  0 = ASPP, 1 = 3x3 conv, 2 = BN, 3 = ReLU, 4 = 1x1 classifier conv) and `upsample`
  (nn.Upsample(scale_factor=4, mode="bilinear", align_corners=False)), called last.
- `TinyBackbone` is ResNet-stem-like: `conv1`, `bn1`, `relu`, `conv2`, `bn2`, `conv3`, `bn3`,
  with ONE nn.ReLU module called three times.
- `ASPP`: `convs` = nn.ModuleList([1x1 Sequential(conv, BN, ReLU), ASPPConv(rate 2),
  ASPPConv(rate 3), ASPPPooling]) and `project` = Sequential(conv 48 -> 12, BN, ReLU, Dropout).
  BN and ReLU are modules of the Sequentials (never inline).
- `ASPPPooling` is an nn.Sequential(AdaptiveAvgPool2d(1), conv, BN, ReLU) with its own forward
  that runs the children and then F.interpolate(size=x.shape[-2:], mode="bilinear",
  align_corners=False).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_rates_os8            -> the ASPP is built with the atrous rates doubled as for output
                                stride 8, (4, 6) instead of (2, 3) (padding follows the rate, so
                                the shapes do not change)
  torch_final_align_corners  -> the final nn.Upsample is built with align_corners=True
"""
import os
from collections import OrderedDict

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IN_CHANNELS, STEM, FEATURES, ASPP_OUT, N_CLASSES = 3, 8, 16, 12, 5
ATROUS_RATES = (2, 3)
EPS = 1e-3
BATCH, SIZE = 2, 32
OWN_BUGS = {"torch_rates_os8", "torch_final_align_corners"}
OTHER_BUGS = {"paddle_proj_bn_eps", "paddle_pool_no_relu"}


def _bn(c):
    return nn.BatchNorm2d(c, eps=EPS, momentum=0.01)


class TinyBackbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(IN_CHANNELS, STEM, 3, stride=2, padding=1, bias=False)
        self.bn1 = _bn(STEM)
        self.relu = nn.ReLU(inplace=False)
        self.conv2 = nn.Conv2d(STEM, FEATURES, 3, stride=2, padding=1, bias=False)
        self.bn2 = _bn(FEATURES)
        self.conv3 = nn.Conv2d(FEATURES, FEATURES, 3, stride=1, padding=1, bias=False)
        self.bn3 = _bn(FEATURES)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.relu(self.bn2(self.conv2(x)))
        return self.relu(self.bn3(self.conv3(x)))


class ASPPConv(nn.Sequential):
    def __init__(self, in_channels, out_channels, dilation):
        super().__init__(
            nn.Conv2d(in_channels, out_channels, 3, padding=dilation, dilation=dilation, bias=False),
            _bn(out_channels),
            nn.ReLU(),
        )


class ASPPPooling(nn.Sequential):
    def __init__(self, in_channels, out_channels):
        super().__init__(
            nn.AdaptiveAvgPool2d(1),
            nn.Conv2d(in_channels, out_channels, 1, bias=False),
            _bn(out_channels),
            nn.ReLU(),
        )

    def forward(self, x):
        size = x.shape[-2:]
        for mod in self:
            x = mod(x)
        return F.interpolate(x, size=size, mode="bilinear", align_corners=False)


class ASPP(nn.Module):
    def __init__(self, in_channels, atrous_rates, out_channels):
        super().__init__()
        modules = [nn.Sequential(nn.Conv2d(in_channels, out_channels, 1, bias=False), _bn(out_channels), nn.ReLU())]
        for rate in atrous_rates:
            modules.append(ASPPConv(in_channels, out_channels, rate))
        modules.append(ASPPPooling(in_channels, out_channels))
        self.convs = nn.ModuleList(modules)
        self.project = nn.Sequential(
            nn.Conv2d(len(self.convs) * out_channels, out_channels, 1, bias=False),
            _bn(out_channels),
            nn.ReLU(),
            nn.Dropout(0.5),
        )

    def forward(self, x):
        res = [conv(x) for conv in self.convs]
        return self.project(torch.cat(res, dim=1))


class DeepLabHead(nn.Sequential):
    def __init__(self, in_channels, num_classes, atrous_rates):
        super().__init__(
            ASPP(in_channels, atrous_rates, ASPP_OUT),
            nn.Conv2d(ASPP_OUT, ASPP_OUT, 3, padding=1, bias=False),
            _bn(ASPP_OUT),
            nn.ReLU(),
            nn.Conv2d(ASPP_OUT, num_classes, 1),
        )


class DeepLabV3(nn.Module):
    def __init__(self, atrous_rates=ATROUS_RATES, align_corners=False):
        super().__init__()
        self.backbone = TinyBackbone()
        self.classifier = DeepLabHead(FEATURES, N_CLASSES, atrous_rates)
        self.upsample = nn.Upsample(scale_factor=4, mode="bilinear", align_corners=align_corners)

    def forward(self, x):
        features = self.backbone(x)
        x = self.classifier(features)
        return OrderedDict(out=self.upsample(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_deeplab_aspp torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    rates = tuple(2 * r for r in ATROUS_RATES) if bug == "torch_rates_os8" else ATROUS_RATES
    m = DeepLabV3(atrous_rates=rates, align_corners=bug == "torch_final_align_corners")
    return m.eval()


def _image():
    rng = np.random.default_rng(31)
    return rng.standard_normal((BATCH, IN_CHANNELS, SIZE, SIZE)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # segmentation logits [2, 5, 32, 32] under "out"
    logits = output["out"] if isinstance(output, dict) else output
    return (logits**2).mean()
