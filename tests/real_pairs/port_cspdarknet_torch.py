"""Hand-written port, torch side: a tiny CSPDarknet backbone, ultralytics YOLOv8 style (written by "person B").

The same math as port_cspdarknet_paddle.py, re-implemented by hand in the style of the
ultralytics code: image [2, 3, 64, 64] (positional) -> the outputs of layers 2, 4 and 7
flattened per sample and concatenated: [2, 7168].

Torch idioms on this side:
- root `YOLOv8Backbone`: `model` = nn.ModuleList of indexed layers, iterated, with a `save`
  tuple (2, 4, 7) naming the layers whose outputs are kept:
    0 Conv(3, 8, k=6, s=2, p=2)  stem (the YOLOv5 v6.0 replacement of Focus: one 6x6 stride-2
                                  conv over the raw image)
    1 Conv(8, 16, 3, 2)      2 C2f(16, 16, n=1, shortcut=True)
    3 Conv(16, 32, 3, 2)     4 C2f(32, 32, n=2, shortcut=True)
    5 Conv(32, 64, 3, 2)     6 C2f(64, 64, n=1, shortcut=True)
    7 SPPF(64, 64, k=5)
- `Conv`: `conv` (bias=False), `bn` nn.BatchNorm2d(eps=1e-3, momentum=0.03), `act`. Like
  ultralytics, `act` is the CLASS attribute `Conv.default_act = nn.SiLU()`: ONE SiLU module
  instance registered in every Conv (named_modules lists it once, as `model.0.act`; its hooks
  fire on every conv's call).
- `C2f`: `cv1` = ONE packed 1x1 Conv(c1, 2c) whose output is chunked in two (first half =
  pass-through, second half = fed to the bottleneck chain), `cv2` the 1x1 fuse conv, `m`
  ModuleList of `Bottleneck` (registered last).
- `Bottleneck`: `cv1`, `cv2` (3x3 Conv), `add` flag, residual add inline.
- `SPPF`: `cv1`, `cv2`, and ONE nn.MaxPool2d(5, 1, 2) `m` called THREE times in a chain
  (pool(x), pool(pool(x)), ...), concat [x, y1, y2, y3], `cv2`.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_c2f_chunk_swapped -> C2f.forward unpacks the two chunks of cv1 in swapped order, so
                             the bottleneck chain runs on the pass-through half and the concat
                             order of the two halves is swapped (every C2f)
  torch_p5_no_shortcut    -> the layer-6 C2f is built with shortcut=False (the flag of the
                             ultralytics head's C2f lines), so its bottleneck drops x + f(x)
"""
import os

import numpy as np
import torch
from torch import nn

BATCH, IMG = 2, 64
OWN_BUGS = {"torch_c2f_chunk_swapped", "torch_p5_no_shortcut"}
OTHER_BUGS = {"paddle_focus_phase_order", "paddle_bn_eps_default"}


def autopad(k, p=None):
    return k // 2 if p is None else p


class Conv(nn.Module):
    default_act = nn.SiLU()

    def __init__(self, c1, c2, k=1, s=1, p=None):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, autopad(k, p), bias=False)
        self.bn = nn.BatchNorm2d(c2, eps=0.001, momentum=0.03)
        self.act = self.default_act

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Bottleneck(nn.Module):
    def __init__(self, c1, c2, shortcut=True, k=(3, 3), e=1.0):
        super().__init__()
        c_ = int(c2 * e)
        self.cv1 = Conv(c1, c_, k[0], 1)
        self.cv2 = Conv(c_, c2, k[1], 1)
        self.add = shortcut and c1 == c2

    def forward(self, x):
        return x + self.cv2(self.cv1(x)) if self.add else self.cv2(self.cv1(x))


class C2f(nn.Module):
    def __init__(self, c1, c2, n=1, shortcut=False, e=0.5, swap_chunks=False):
        super().__init__()
        self.swap_chunks = swap_chunks
        self.c = int(c2 * e)
        self.cv1 = Conv(c1, 2 * self.c, 1, 1)
        self.cv2 = Conv((2 + n) * self.c, c2, 1)
        self.m = nn.ModuleList(Bottleneck(self.c, self.c, shortcut, k=(3, 3), e=1.0) for _ in range(n))

    def forward(self, x):
        a, b = self.cv1(x).chunk(2, 1)
        y = [b, a] if self.swap_chunks else [a, b]
        for m in self.m:
            y.append(m(y[-1]))
        return self.cv2(torch.cat(y, 1))


class SPPF(nn.Module):
    def __init__(self, c1, c2, k=5):
        super().__init__()
        c_ = c1 // 2
        self.cv1 = Conv(c1, c_, 1, 1)
        self.cv2 = Conv(c_ * 4, c2, 1, 1)
        self.m = nn.MaxPool2d(kernel_size=k, stride=1, padding=k // 2)

    def forward(self, x):
        y = [self.cv1(x)]
        y.extend(self.m(y[-1]) for _ in range(3))
        return self.cv2(torch.cat(y, 1))


class YOLOv8Backbone(nn.Module):
    def __init__(self, p5_shortcut=True, swap_chunks=False):
        super().__init__()
        self.model = nn.ModuleList([
            Conv(3, 8, 6, 2, 2),
            Conv(8, 16, 3, 2),
            C2f(16, 16, 1, True, swap_chunks=swap_chunks),
            Conv(16, 32, 3, 2),
            C2f(32, 32, 2, True, swap_chunks=swap_chunks),
            Conv(32, 64, 3, 2),
            C2f(64, 64, 1, p5_shortcut, swap_chunks=swap_chunks),
            SPPF(64, 64, 5),
        ])
        self.save = (2, 4, 7)

    def forward(self, x):
        outs = []
        for i, m in enumerate(self.model):
            x = m(x)
            if i in self.save:
                outs.append(x)
        return torch.cat([o.flatten(1) for o in outs], 1)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_cspdarknet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = YOLOv8Backbone(p5_shortcut=bug != "torch_p5_no_shortcut", swap_chunks=bug == "torch_c2f_chunk_swapped")
    return m.eval()


def _image():
    return np.random.default_rng(44).standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # flattened multi-level features [2, 7168]
    return (output**2).mean()
