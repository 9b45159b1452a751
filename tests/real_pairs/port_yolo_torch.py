"""Hand-written port, torch side: a tiny YOLOv5-style detector (written by "person B"), eval mode.
Same math as port_yolo_paddle.py: input [1, 3, 64, 64], 3 classes, 3 anchors per level, strides
8 / 16, decoded output [1, 240, 8] (x, y, w, h in pixels, obj, 3 class scores).

Torch idioms on this side (ultralytics-like):
- `Conv` = `conv` (Conv2d no bias, autopad) + `bn` (BatchNorm2d eps=1e-3, momentum=0.03) + `act`
  (nn.SiLU).
- `C3` FUSES the paddle side's two parallel 1x1 ConvBNLayers (conv1 main / conv2 shortcut) into
  ONE `cv12` Conv with twice the output channels (conv weight rows 0:c_ = main, c_:2c_ =
  shortcut; its BatchNorm packed the same way) whose output is chunked in two; `m` (Sequential of
  Bottlenecks with `cv1`, `cv2`) on the first half, `cv3` on cat [m(a), b].
- `SPPF` registers `cv2` before `cv1` and pools with F.max_pool2d inline (three times), no module.
- `backbone` is one nn.Sequential with indices (0 stem, 1 Conv, 2 C3, 3 Conv, 4 C3, 5 Conv, 6 C3,
  7 SPPF); the forward walks it and keeps the outputs of 4 (c4) and 7 (c5).
- `neck` (`PAN`): `reduce` (1x1 Conv), `up` = nn.Upsample(scale_factor=2, mode="nearest") module,
  `c3_p4`, `down` (3x3 s2 Conv), `c3_p5`.
- `detect` (`Detect`): `m` ModuleList of 1x1 Conv2d; `anchor_grid` buffer [2, 1, 3, 1, 1, 2]
  (pixels, non-persistent); the predictions are viewed [b, na, no, ny, nx] and permuted to
  [b, na, ny, nx, no]; the grid is built with torch.meshgrid(indexing="ij") stacked (x, y) as
  [1, 1, ny, nx, 2].

Planted bugs (PADIFF_BUG), see port_yolo_truth.json; the paddle side's bug name is accepted and
ignored, any other name raises ValueError:
  torch_bn_default_eps    -> `Conv` builds nn.BatchNorm2d(c2, momentum=0.03) without eps=, i.e.
                             torch's default 1e-5 instead of YOLOv5's 1e-3, in every Conv
                             (precision-level)
  torch_neck_concat_order -> the PAN's top-down concat is torch.cat([c4, up]) instead of
                             [up, c4] (the channel blocks swapped before c3_p4)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IMG, NC, NA = 64, 3, 3
NO = NC + 5
STRIDES = (8, 16)
ANCHORS = ((10.0, 13.0), (16.0, 30.0), (33.0, 23.0)), ((30.0, 61.0), (62.0, 45.0), (59.0, 119.0))

OWN_BUGS = {"torch_bn_default_eps", "torch_neck_concat_order"}
OTHER_BUGS = {"paddle_grid_yx"}
BN_EPS = 1e-3


class Conv(nn.Module):
    def __init__(self, c1, c2, k=1, s=1):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c2, momentum=0.03) if BN_EPS is None else nn.BatchNorm2d(c2, eps=BN_EPS, momentum=0.03)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Bottleneck(nn.Module):
    def __init__(self, c, shortcut=True):
        super().__init__()
        self.cv1 = Conv(c, c, 1)
        self.cv2 = Conv(c, c, 3)
        self.add = shortcut

    def forward(self, x):
        return x + self.cv2(self.cv1(x)) if self.add else self.cv2(self.cv1(x))


class C3(nn.Module):
    def __init__(self, c1, c2, n=1, shortcut=True):
        super().__init__()
        c_ = c2 // 2
        self.cv12 = Conv(c1, 2 * c_, 1)  # fused: main | shortcut branch
        self.m = nn.Sequential(*(Bottleneck(c_, shortcut) for _ in range(n)))
        self.cv3 = Conv(2 * c_, c2, 1)

    def forward(self, x):
        a, b = self.cv12(x).chunk(2, dim=1)
        return self.cv3(torch.cat((self.m(a), b), dim=1))


class SPPF(nn.Module):
    def __init__(self, c1, c2, k=5):
        super().__init__()
        c_ = c1 // 2
        self.cv2 = Conv(c_ * 4, c2, 1)
        self.cv1 = Conv(c1, c_, 1)
        self.k = k

    def forward(self, x):
        y = [self.cv1(x)]
        for _ in range(3):
            y.append(F.max_pool2d(y[-1], self.k, stride=1, padding=self.k // 2))
        return self.cv2(torch.cat(y, dim=1))


class PAN(nn.Module):
    def __init__(self, swap_concat=False):
        super().__init__()
        self.swap_concat = swap_concat
        self.reduce = Conv(64, 32, 1)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.c3_p4 = C3(64, 32, shortcut=False)
        self.down = Conv(32, 32, 3, 2)
        self.c3_p5 = C3(64, 64, shortcut=False)

    def forward(self, c4, c5):
        p5 = self.reduce(c5)
        up = self.up(p5)
        n4 = self.c3_p4(torch.cat([c4, up] if self.swap_concat else [up, c4], dim=1))
        n5 = self.c3_p5(torch.cat([self.down(n4), p5], dim=1))
        return n4, n5


class Detect(nn.Module):
    def __init__(self, ch=(32, 64)):
        super().__init__()
        self.m = nn.ModuleList(nn.Conv2d(c, NA * NO, 1) for c in ch)
        self.register_buffer("anchor_grid", torch.tensor(ANCHORS).view(2, 1, NA, 1, 1, 2), persistent=False)

    @staticmethod
    def make_grid(nx, ny):
        yv, xv = torch.meshgrid(torch.arange(ny, dtype=torch.float32), torch.arange(nx, dtype=torch.float32), indexing="ij")
        return torch.stack((xv, yv), dim=2).view(1, 1, ny, nx, 2)

    def forward(self, xs):
        z = []
        for i, xi in enumerate(xs):
            x = self.m[i](xi)
            bs, _, ny, nx = x.shape
            y = x.view(bs, NA, NO, ny, nx).permute(0, 1, 3, 4, 2).sigmoid()
            xy, wh, conf = y.split((2, 2, NO - 4), dim=4)
            xy = (xy * 2 - 0.5 + self.make_grid(nx, ny)) * STRIDES[i]
            wh = (wh * 2) ** 2 * self.anchor_grid[i]
            z.append(torch.cat((xy, wh, conf), dim=4).view(bs, -1, NO))
        return torch.cat(z, dim=1)


class YOLO(nn.Module):
    def __init__(self, swap_concat=False):
        super().__init__()
        self.backbone = nn.Sequential(
            Conv(3, 8, 3, 2),
            Conv(8, 16, 3, 2), C3(16, 16),
            Conv(16, 32, 3, 2), C3(32, 32),
            Conv(32, 64, 3, 2), C3(64, 64), SPPF(64, 64),
        )
        self.neck = PAN(swap_concat)
        self.detect = Detect()

    def forward(self, x):
        feats = {}
        for i, layer in enumerate(self.backbone):
            x = layer(x)
            if i in (4, 7):
                feats[i] = x
        return self.detect(self.neck(feats[4], feats[7]))


def model():
    global BN_EPS
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_yolo torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    BN_EPS = None if bug == "torch_bn_default_eps" else 1e-3
    m = YOLO(swap_concat=bug == "torch_neck_concat_order")
    return m.eval()


def _image():
    return np.random.default_rng(23).uniform(0.0, 1.0, (1, 3, IMG, IMG)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # decoded predictions [1, 240, 8] (pixels for x, y, w, h): scale down before squaring
    return ((output / 64.0) ** 2).mean()
