"""Hand-written port, torch side: a tiny SE-ResNeXt image classifier (written by "person B").

The same network as port_seresnext_paddle.py, re-implemented by hand in the style of the
Cadene / timm SE-ResNeXt. Sizes: input [2, 3, 32, 32], 10 classes, eval mode, BatchNorm eps
1e-5, cardinality 8, SE reduction 4; layers.0: 32 -> 32 -> 32 stride 1; layers.1: 32 -> 64 -> 64
stride 2 with a projection shortcut; layers.2: 64 -> 64 -> 64 stride 1.

Torch idioms on this side:
- root `SEResNeXt`: `stem` = nn.Sequential(Conv2d, BatchNorm2d, ReLU) (stem.0 / stem.1 /
  stem.2), `layers` = nn.Sequential of `Bottleneck` (layers.0 .. layers.2, called as one
  Sequential), the global pool is an inline x.mean((2, 3)), `fc` Linear(64, 10);
- `Bottleneck`: conv1 / bn1 (1x1), conv2 / bn2 (grouped 3x3 carrying the stride), then the SE
  `se` is registered BEFORE conv3 / bn3 (it is called after them); ReLU is F.relu inline;
  `downsample` = nn.Sequential(Conv2d 1x1 stride 2, BatchNorm2d) (downsample.0 / downsample.1),
  registered last and called last;
- `SEModule` keeps the [N, C, 1, 1] map: mean over H, W (keepdim) inline, `fc1` = 1x1 Conv2d
  (C -> C/4, bias), `relu` nn.ReLU module, `fc2` = 1x1 Conv2d (C/4 -> C, bias), torch.sigmoid
  inline, then x * gate.

Planted bugs (PADIFF_BUG), see port_seresnext_truth.json; the paddle side's bug names are
accepted and ignored, any other name raises ValueError:
  torch_stride_on_1x1 -> in the downsampling block the stride 2 sits on conv1 (the 1x1
                         reduction, the original ResNet v1 placement) instead of conv2 (the
                         grouped 3x3, as in the paddle model); shapes still match
  torch_se_after_add  -> Bottleneck.forward applies the SE to the residual sum
                         (se(out + identity)) instead of to the residual branch before the add
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

NUM_CLASSES = 10
CARDINALITY = 8
REDUCTION = 4
BATCH, IMG = 2, 32
BLOCKS = [(32, 32, 32, 1), (32, 64, 64, 2), (64, 64, 64, 1)]
OWN_BUGS = {"torch_stride_on_1x1", "torch_se_after_add"}
OTHER_BUGS = {"paddle_conv2_bn_relu"}


class SEModule(nn.Module):
    def __init__(self, channels, reduction):
        super().__init__()
        self.fc1 = nn.Conv2d(channels, channels // reduction, kernel_size=1, padding=0)
        self.relu = nn.ReLU(inplace=True)
        self.fc2 = nn.Conv2d(channels // reduction, channels, kernel_size=1, padding=0)

    def forward(self, x):
        module_input = x
        x = x.mean((2, 3), keepdim=True)
        x = self.fc1(x)
        x = self.relu(x)
        x = self.fc2(x)
        return module_input * torch.sigmoid(x)


class Bottleneck(nn.Module):
    def __init__(self, inplanes, width, planes, stride=1, stride_on_1x1=False, se_after_add=False):
        super().__init__()
        s1, s3 = (stride, 1) if stride_on_1x1 else (1, stride)
        self.se_after_add = se_after_add
        self.conv1 = nn.Conv2d(inplanes, width, kernel_size=1, stride=s1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, kernel_size=3, stride=s3, padding=1, groups=CARDINALITY, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.se = SEModule(planes, REDUCTION)
        self.conv3 = nn.Conv2d(width, planes, kernel_size=1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(
                nn.Conv2d(inplanes, planes, kernel_size=1, stride=stride, bias=False),
                nn.BatchNorm2d(planes),
            )

    def forward(self, x):
        identity = x
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        if self.se_after_add:
            out = self.se(out + identity)
        else:
            out = self.se(out) + identity
        return F.relu(out)


class SEResNeXt(nn.Module):
    def __init__(self, stride_on_1x1=False, se_after_add=False):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 32, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(32),
            nn.ReLU(inplace=True),
        )
        self.layers = nn.Sequential(
            *[Bottleneck(cin, w, cout, s, stride_on_1x1, se_after_add) for cin, w, cout, s in BLOCKS]
        )
        self.fc = nn.Linear(BLOCKS[-1][2], NUM_CLASSES)

    def forward(self, x):
        x = self.stem(x)
        x = self.layers(x)
        x = x.mean((2, 3))
        return self.fc(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_seresnext torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = SEResNeXt(stride_on_1x1=bug == "torch_stride_on_1x1", se_after_add=bug == "torch_se_after_add")
    return m.eval()


def _images():
    rng = np.random.default_rng(5)
    return rng.standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
