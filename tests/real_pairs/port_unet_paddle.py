"""Hand-written port, paddle side: a tiny UNet-like segmentation net written the way a Paddle user
would write it (the "original" model). 32x32 RGB in, 3 classes out per pixel; widths 8 / 16 / 32.

    enc1 (3->8, 32x32) -pool-> enc2 (8->16, 16x16) -pool-> bottleneck (16->32, 8x8)
    up2: Conv2DTranspose 32->16 (x2), concat [skip enc2, up], ConvBlock 32->16 (16x16)
    up1: Conv2DTranspose 16->8 (x2), concat [skip enc1, up], ConvBlock 16->8 (32x32)
    head: 1x1 Conv2D 8->3

Paddle idioms on this side: a `ConvBlock` layer with named `conv1/gn1/conv2/gn2` and ONE
`nn.Silu` called twice, one `nn.MaxPool2D` on the root called twice, `UpBlock(x, skip)` with a
`nn.Conv2DTranspose` (weight [in, out, kh, kw]), `nn.GroupNorm(4, C)` with paddle's default
epsilon 1e-5; the decoder is numbered from the bottom (`up2` is the deep one).

PADIFF_BUG=paddle_gn_groups plants this side's bug (see port_unet_truth.json).
"""
import os

import numpy as np
import paddle
from paddle import nn

GROUPS = 4


class ConvBlock(nn.Layer):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv1 = nn.Conv2D(cin, cout, 3, padding=1)
        self.gn1 = nn.GroupNorm(GROUPS, cout)
        self.conv2 = nn.Conv2D(cout, cout, 3, padding=1)
        self.gn2 = nn.GroupNorm(GROUPS, cout)
        self.act = nn.Silu()

    def forward(self, x):
        x = self.act(self.gn1(self.conv1(x)))
        return self.act(self.gn2(self.conv2(x)))


class UpBlock(nn.Layer):
    def __init__(self, cin, cout):
        super().__init__()
        self.up = nn.Conv2DTranspose(cin, cout, kernel_size=2, stride=2)
        self.conv = ConvBlock(2 * cout, cout)

    def forward(self, x, skip):
        x = self.up(x)
        return self.conv(paddle.concat([skip, x], axis=1))


class UNet(nn.Layer):
    def __init__(self, in_channels=3, num_classes=3):
        super().__init__()
        self.enc1 = ConvBlock(in_channels, 8)
        self.enc2 = ConvBlock(8, 16)
        self.pool = nn.MaxPool2D(kernel_size=2, stride=2)
        self.bottleneck = ConvBlock(16, 32)
        self.up2 = UpBlock(32, 16)
        self.up1 = UpBlock(16, 8)
        self.head = nn.Conv2D(8, num_classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        b = self.bottleneck(self.pool(e2))
        d2 = self.up2(b, e2)
        d1 = self.up1(d2, e1)
        return self.head(d1)


def model():
    paddle.seed(0)
    m = UNet()
    m.eval()
    _perturb(m)
    if os.environ.get("PADIFF_BUG", "") == "paddle_gn_groups":
        # the bottleneck's first GroupNorm with 8 groups (4 channels each) instead of 4 (8 channels each)
        m.bottleneck.gn1._num_groups = 8
    return m


def _perturb(m):
    """Random init leaves every bias 0 and every GroupNorm at (1, 0): give them random values
    (fixed numpy rng) so that a bias or norm parameter ported wrongly shows."""
    rng = np.random.default_rng(1)
    for name, p in m.named_parameters():
        if name.endswith(".bias"):
            p.set_value(rng.normal(0.0, 0.05, p.shape).astype("float32"))
        elif ".gn" in name and name.endswith(".weight"):
            p.set_value((1.0 + rng.normal(0.0, 0.1, p.shape)).astype("float32"))


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    # per-pixel logits [2, 3, 32, 32] of a 1x1 conv (not normalised): a mean of squares depends on all of it
    return (output**2).mean()
