"""Hand-written port, torch side: a tiny gated PixelCNN (written by "person B").

The same math as port_pixelcnn_paddle.py, re-implemented by hand in torch, channels-first (NCHW)
throughout. Images [2, 1, 12, 12] -> logits over 16 levels [2, 16, 12, 12].

- `MaskedConv2d(nn.Conv2d)` takes a `kind` ("vertical" / "horizontal") and a `mask_type`
  ("A" / "B"), builds its mask from torch.ones_like(weight) and keeps it as a registered buffer
  `mask`; forward is self._conv_forward(x, self.weight * self.mask, self.bias).
  vertical: 3x3, padding 1, rows below the centre zeroed; horizontal: 1x3, padding (0, 1),
  columns right of the centre zeroed, and the centre too for type "A".
- `GatedBlock` (registration: v_conv, h_conv, v_to_h, h_res, shift):
    v = v_conv(v_in); h = h_conv(h_in)
    h = h + v_to_h(shift(v)[:, :, :-1])     (shift = nn.ZeroPad2d((0, 0, 1, 0)): a zero row on
                                             top, the last row cropped: one row down)
    return gated(v), h_res(gated(h)) (+ h_in from the second block on)
  gated(x) = tanh(a) * sigmoid(b) with a, b = x.chunk(2, dim=1), a module-level function.
- `GatedPixelCNN`: `blocks` (nn.ModuleList of 3, the first with mask "A" and 1 input channel),
  `head` = nn.Sequential(ReLU, Conv2d(16, 32, 1), ReLU, Conv2d(32, 16, 1)).

Planted bugs (PADIFF_BUG); the paddle side's bug names are accepted and ignored, any other name
raises ValueError:
  torch_first_mask_b  -> the first block's horizontal conv is built with mask type "B" (centre tap
                         kept): every pixel's logits see the pixel itself (a causality leak)
  torch_no_down_shift -> the vertical-to-horizontal connection uses v directly
                         (h + v_to_h(v)): the down shift is never applied, so the horizontal
                         stack at row i sees vertical features of row i itself (every block)
"""
import os

import numpy as np
import torch
from torch import nn

CHANNELS, LEVELS, LAYERS, KERNEL = 16, 16, 3, 3
BATCH, SIZE = 2, 12
OWN_BUGS = {"torch_first_mask_b", "torch_no_down_shift"}
OTHER_BUGS = {"paddle_gate_swapped", "paddle_vmask_centre_row"}


class MaskedConv2d(nn.Conv2d):
    def __init__(self, cin, cout, kind, mask_type="B", k=KERNEL):
        if kind == "vertical":
            super().__init__(cin, cout, (k, k), padding=k // 2)
        else:
            super().__init__(cin, cout, (1, k), padding=(0, k // 2))
        mask = torch.ones_like(self.weight)
        if kind == "vertical":
            mask[:, :, k // 2 + 1 :, :] = 0
        else:
            mask[:, :, :, k // 2 + 1 :] = 0
            if mask_type == "A":
                mask[:, :, :, k // 2] = 0
        self.register_buffer("mask", mask)

    def forward(self, x):
        return self._conv_forward(x, self.weight * self.mask, self.bias)


def gated(x):
    a, b = x.chunk(2, dim=1)
    return torch.tanh(a) * torch.sigmoid(b)


class GatedBlock(nn.Module):
    def __init__(self, cin, mask_type, residual, no_shift=False):
        super().__init__()
        self.v_conv = MaskedConv2d(cin, 2 * CHANNELS, "vertical")
        self.h_conv = MaskedConv2d(cin, 2 * CHANNELS, "horizontal", mask_type)
        self.v_to_h = nn.Conv2d(2 * CHANNELS, 2 * CHANNELS, 1)
        self.h_res = nn.Conv2d(CHANNELS, CHANNELS, 1)
        self.shift = nn.ZeroPad2d((0, 0, 1, 0))
        self.residual = residual
        self.no_shift = no_shift

    def forward(self, v_in, h_in):
        v = self.v_conv(v_in)
        h = self.h_conv(h_in)
        if self.no_shift:
            h = h + self.v_to_h(v)
        else:
            h = h + self.v_to_h(self.shift(v)[:, :, :-1, :])
        out = self.h_res(gated(h))
        if self.residual:
            out = out + h_in
        return gated(v), out


class GatedPixelCNN(nn.Module):
    def __init__(self, first_mask="A", no_shift=False):
        super().__init__()
        self.blocks = nn.ModuleList(
            [GatedBlock(1, first_mask, False, no_shift)]
            + [GatedBlock(CHANNELS, "B", True, no_shift) for _ in range(LAYERS - 1)]
        )
        self.head = nn.Sequential(
            nn.ReLU(), nn.Conv2d(CHANNELS, 2 * CHANNELS, 1), nn.ReLU(), nn.Conv2d(2 * CHANNELS, LEVELS, 1)
        )

    def forward(self, x):  # [B, 1, H, W]
        v = h = x
        for blk in self.blocks:
            v, h = blk(v, h)
        return self.head(h)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_pixelcnn torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = GatedPixelCNN(first_mask="B" if bug == "torch_first_mask_b" else "A", no_shift=bug == "torch_no_down_shift")
    return m.eval()


def _images():
    rng = np.random.default_rng(5)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    imgs = []
    for _ in range(BATCH):
        cy, cx, r = rng.uniform(3, 9), rng.uniform(3, 9), rng.uniform(2.5, 5)
        blob = np.clip(1.2 - np.hypot(yy - cy, xx - cx) / r, 0, 1) + 0.15 * rng.random((SIZE, SIZE))
        imgs.append(np.round(np.clip(blob, 0, 1) * (LEVELS - 1)) / (LEVELS - 1))
    return np.stack(imgs)[:, None].astype("float32")


def inputs():
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # logits [2, 16, 12, 12]
    return (output**2).mean()
