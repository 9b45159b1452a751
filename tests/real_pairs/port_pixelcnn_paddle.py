"""Hand-written port, paddle side: a tiny gated PixelCNN (written by "person A").

Sizes: images [2, 1, 12, 12] (float intensities k / 15), 16 feature channels (32 before each gate),
3 gated layers, kernel 3, output logits over 16 intensity levels per pixel [2, 16, 12, 12].

The model (van den Oord et al. 2016, "Conditional image generation with PixelCNN decoders"),
written CHANNELS-LAST: the input is transposed to NHWC once and every conv / pad runs with
data_format="NHWC"; the logits are transposed back to NCHW at the very end (to match the
reference API).
- `MaskedConv2D` subclasses nn.Conv2D (weight [out, in, kh, kw]) and holds a non-trainable
  `mask` buffer (register_buffer, persistable) of the weight's shape; forward is
  F.conv2d(x, weight * mask, bias, data_format="NHWC").
  - vertical stack: 3x3 kernel, padding 1, mask keeps the rows ABOVE and the centre row
    (rows > centre zeroed), all columns;
  - horizontal stack: 1x3 kernel, padding (0, 1), mask keeps the pixels LEFT of the centre; type
    "A" (first layer) also zeroes the centre tap, type "B" keeps it.
- `GatedLayer` (registration order: h_conv, v_conv, down_shift, v_to_h, h_out):
    v = v_conv(v_in)                                  (2 * 16 channels)
    h = h_conv(h_in) + v_to_h(shift_down(v))          (1x1 conv; the vertical features are moved
                                                       one row DOWN: `down_shift` = nn.Pad2D
                                                       adding a zero row on top, then the last row
                                                       is cropped inline, so pixel (i, j) only
                                                       sees rows < i through the vertical stack)
    v_out = gate(v); h_out = h_out_conv(gate(h)) (+ h_in, residual, except in the first layer)
  gate(x) = tanh(x[..., :16]) * sigmoid(x[..., 16:]) (paddle.split on the last axis), inline.
- `PixelCNN`: `layers` (LayerList of 3 GatedLayer, the first with mask "A" and 1 input channel),
  then F.relu -> `out_conv1` (1x1, 16 -> 32) -> F.relu -> `out_conv2` (1x1, 32 -> 16 logits).

The torch side (port_pixelcnn_torch.py) was written independently (NCHW, nn.ZeroPad2d, an
nn.Sequential head, chunk on dim 1).

Planted bugs on this side (PADIFF_BUG); the torch side's bug names are accepted and ignored, any
other name raises ValueError:
  paddle_gate_swapped      -> gate(x) = sigmoid(first half) * tanh(second half): the halves of
                              the channel split swapped (every layer, both stacks)
  paddle_vmask_centre_row  -> the vertical mask zeroes the centre row too (mask[:, :, kh // 2:])
                              so the vertical stack sees only rows < i, and after the down shift
                              rows < i - 1 (every vertical conv)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

CHANNELS, LEVELS, LAYERS, KERNEL = 16, 16, 3, 3
BATCH, SIZE = 2, 12
OWN_BUGS = {"paddle_gate_swapped", "paddle_vmask_centre_row"}
OTHER_BUGS = {"torch_first_mask_b", "torch_no_down_shift"}


def vertical_mask(out_c, in_c, k, centre_row_bug=False):
    mask = np.ones([out_c, in_c, k, k], dtype="float32")
    if centre_row_bug:
        mask[:, :, k // 2 :, :] = 0.0
    else:
        mask[:, :, k // 2 + 1 :, :] = 0.0
    return mask


def horizontal_mask(out_c, in_c, k, mask_type):
    mask = np.ones([out_c, in_c, 1, k], dtype="float32")
    mask[:, :, :, k // 2 + 1 :] = 0.0
    if mask_type == "A":
        mask[:, :, :, k // 2] = 0.0
    return mask


class MaskedConv2D(nn.Conv2D):
    def __init__(self, in_channels, out_channels, kernel_size, padding, mask):
        super().__init__(in_channels, out_channels, kernel_size, padding=padding, data_format="NHWC")
        self.register_buffer("mask", paddle.to_tensor(mask), persistable=True)

    def forward(self, x):
        return F.conv2d(x, self.weight * self.mask, self.bias, padding=self._padding, data_format="NHWC")


class GatedLayer(nn.Layer):
    def __init__(self, in_channels, mask_type, residual, gate_swapped=False, vmask_bug=False):
        super().__init__()
        c2 = 2 * CHANNELS
        self.residual = residual
        self.gate_swapped = gate_swapped
        self.h_conv = MaskedConv2D(in_channels, c2, (1, KERNEL), (0, KERNEL // 2),
                                   horizontal_mask(c2, in_channels, KERNEL, mask_type))
        self.v_conv = MaskedConv2D(in_channels, c2, (KERNEL, KERNEL), KERNEL // 2,
                                   vertical_mask(c2, in_channels, KERNEL, vmask_bug))
        self.down_shift = nn.Pad2D([0, 0, 1, 0], data_format="NHWC")  # [left, right, top, bottom]
        self.v_to_h = nn.Conv2D(c2, c2, 1, data_format="NHWC")
        self.h_out = nn.Conv2D(CHANNELS, CHANNELS, 1, data_format="NHWC")

    def gate(self, x):
        a, b = paddle.split(x, 2, axis=-1)
        if self.gate_swapped:
            return F.sigmoid(a) * paddle.tanh(b)
        return paddle.tanh(a) * F.sigmoid(b)

    def forward(self, v_in, h_in):
        v = self.v_conv(v_in)
        v_shifted = self.down_shift(v)[:, :-1, :, :]  # row i now holds row i - 1
        h = self.h_conv(h_in) + self.v_to_h(v_shifted)
        h_new = self.h_out(self.gate(h))
        if self.residual:
            h_new = h_new + h_in
        return self.gate(v), h_new


class PixelCNN(nn.Layer):
    def __init__(self, gate_swapped=False, vmask_bug=False):
        super().__init__()
        self.layers = nn.LayerList(
            [GatedLayer(1 if i == 0 else CHANNELS, "A" if i == 0 else "B", i > 0, gate_swapped, vmask_bug)
             for i in range(LAYERS)]
        )
        self.out_conv1 = nn.Conv2D(CHANNELS, 2 * CHANNELS, 1, data_format="NHWC")
        self.out_conv2 = nn.Conv2D(2 * CHANNELS, LEVELS, 1, data_format="NHWC")

    def forward(self, images):  # [B, 1, H, W]
        x = images.transpose([0, 2, 3, 1])  # NHWC
        v, h = x, x
        for layer in self.layers:
            v, h = layer(v, h)
        logits = self.out_conv2(F.relu(self.out_conv1(F.relu(h))))
        return logits.transpose([0, 3, 1, 2])  # [B, LEVELS, H, W]


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_pixelcnn paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = PixelCNN(gate_swapped=bug == "paddle_gate_swapped", vmask_bug=bug == "paddle_vmask_centre_row")
    m.eval()
    return m


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
    return (paddle.to_tensor(_images()),), {}


def loss(output):
    # logits [2, 16, 12, 12]
    return (output**2).mean()
