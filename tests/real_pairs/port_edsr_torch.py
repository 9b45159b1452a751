"""Hand-written port, torch side: a tiny EDSR x2 super-resolution net (written by "person B").

The same math as port_edsr_paddle.py, re-implemented by hand in the style of BasicSR's EDSR:
input [2, 3, 12, 12] (positional), output [2, 3, 24, 24]; 16 features, 3 residual blocks
(res_scale 0.1), x2 upsampling; all convs 3x3, zero padding 1, with bias.

Torch idioms on this side:
- root `EDSRNet`: the DIV2K RGB mean is a registered BUFFER `mean` [1, 3, 1, 1]; the mean shift
  is INLINE: x = (x - mean) * img_range at the start, x / img_range + mean at the end (no
  module). Then `conv_first` (3 -> 16), `body` (nn.Sequential of 3 `ResidualBlockNoBN`, the res
  blocks ONLY), `conv_after_body` (16 -> 16, a root child, not inside `body`), `upsample`
  (`DepthToSpaceUpsample`), `conv_last` (16 -> 3).
- `ResidualBlockNoBN` registers `conv1`, `conv2`, `relu` (nn.ReLU), `scale` (a `ResidualScale`
  MODULE, x * 0.1); forward: identity + scale(conv2(relu(conv1(x)))).
- `DepthToSpaceUpsample`: `conv` (16 -> 64) followed by a HAND-WRITTEN depth-to-space in
  TensorFlow's (DCR) order: view [B, 2, 2, 16, H, W] -> permute (0, 3, 4, 1, 5, 2) -> [B, 16,
  2H, 2W], i.e. output channel c, sub-pixel (i, j) comes from conv channel (i * 2 + j) * 16 + c.
  Paddle's PixelShuffle reads channel c * 4 + i * 2 + j, so this conv's 64 output channels are
  the paddle conv's permuted (transform in port_edsr_hook.py); the up-sampled maps agree.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_d2s_ij_swapped      -> the depth-to-space permutes (0, 3, 4, 2, 5, 1): the row and column
                               sub-pixel offsets are swapped, so the two off-diagonal pixels of
                               every 2x2 output block trade places
  torch_conv_last_replicate -> conv_last is built with padding_mode="replicate" instead of the
                               default zero padding (only the border pixels change)
"""
import os

import numpy as np
import torch
from torch import nn

NUM_IN_CH, NUM_OUT_CH, NUM_FEAT, NUM_BLOCK, UPSCALE, RES_SCALE, IMG_RANGE = 3, 3, 16, 3, 2, 0.1, 1.0
DIV2K_MEAN = (0.4488, 0.4371, 0.4040)
BATCH, SIZE = 2, 12
OWN_BUGS = {"torch_d2s_ij_swapped", "torch_conv_last_replicate"}
OTHER_BUGS = {"paddle_leaky_relu", "paddle_res_scale_on_sum"}


class ResidualScale(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return x * self.scale


class ResidualBlockNoBN(nn.Module):
    def __init__(self, num_feat, res_scale):
        super().__init__()
        self.conv1 = nn.Conv2d(num_feat, num_feat, 3, 1, 1, bias=True)
        self.conv2 = nn.Conv2d(num_feat, num_feat, 3, 1, 1, bias=True)
        self.relu = nn.ReLU()
        self.scale = ResidualScale(res_scale)

    def forward(self, x):
        identity = x
        out = self.conv2(self.relu(self.conv1(x)))
        return identity + self.scale(out)


class DepthToSpaceUpsample(nn.Module):
    def __init__(self, scale, num_feat, ij_swapped=False):
        super().__init__()
        self.scale = scale
        self.ij_swapped = ij_swapped
        self.conv = nn.Conv2d(num_feat, scale * scale * num_feat, 3, 1, 1)

    def forward(self, x):
        x = self.conv(x)
        b, c, h, w = x.shape
        r = self.scale
        x = x.view(b, r, r, c // (r * r), h, w)
        if self.ij_swapped:
            x = x.permute(0, 3, 4, 2, 5, 1)
        else:
            x = x.permute(0, 3, 4, 1, 5, 2)
        return x.reshape(b, c // (r * r), h * r, w * r)


class EDSRNet(nn.Module):
    def __init__(self, ij_swapped=False, last_padding_mode="zeros"):
        super().__init__()
        self.img_range = IMG_RANGE
        self.register_buffer("mean", torch.tensor(DIV2K_MEAN, dtype=torch.float32).view(1, 3, 1, 1))
        self.conv_first = nn.Conv2d(NUM_IN_CH, NUM_FEAT, 3, 1, 1)
        self.body = nn.Sequential(*[ResidualBlockNoBN(NUM_FEAT, RES_SCALE) for _ in range(NUM_BLOCK)])
        self.conv_after_body = nn.Conv2d(NUM_FEAT, NUM_FEAT, 3, 1, 1)
        self.upsample = DepthToSpaceUpsample(UPSCALE, NUM_FEAT, ij_swapped)
        self.conv_last = nn.Conv2d(NUM_FEAT, NUM_OUT_CH, 3, 1, 1, padding_mode=last_padding_mode)

    def forward(self, x):
        x = (x - self.mean) * self.img_range
        x = self.conv_first(x)
        res = self.conv_after_body(self.body(x))
        res = res + x
        x = self.conv_last(self.upsample(res))
        return x / self.img_range + self.mean


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_edsr torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = EDSRNet(ij_swapped=bug == "torch_d2s_ij_swapped",
                last_padding_mode="replicate" if bug == "torch_conv_last_replicate" else "zeros")
    return m.eval()


def _image():
    rng = np.random.default_rng(41)
    return rng.uniform(0.0, 1.0, (BATCH, NUM_IN_CH, SIZE, SIZE)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # super-resolved image [2, 3, 24, 24]
    return (output**2).mean()
