"""Hand-written port, paddle side: a small WaveNet-style causal TCN (written by "person A").

Input: audio features [B, T, F] (batch, time, 8 feature bins). Everything on this side stays in
paddle's channels-last layout (`data_format="NLC"` on every Conv1D):

    input_conv (1x1 Conv1D 8->16)
    layers.0..2: ResidualBlock, dilations 1, 2, 4, kernel 3
        causal: F.pad on the LEFT by (K-1)*d, then `dilated` = ONE Conv1D 16 -> 32 (2C channels)
        split into filter | gate halves, z = tanh(filter) * sigmoid(gate)
        res_conv (1x1, 16->16), skip_conv (1x1, 16->16)
        returns ((x + res) * sqrt(0.5), skip)
    output = Sequential(ReLU, Conv1D 1x1 16->16, ReLU, Conv1D 1x1 16->10) on (sum of skips + x)

Output: [B, T, 10].

The torch side (port_tcn_torch.py) was written independently: channels-first, symmetric conv
padding with the tail sliced off, two convs (filter, gate) under weight normalization, the stem as
an nn.Linear.

PADIFF_BUG=paddle_dilation plants this side's bug: the dilation list is typed (1, 2, 2) instead of
(1, 2, 4), so the last block looks 4 steps back instead of 8 (consistently padded: still causal).
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

FEATS, CHANNELS, OUT, KERNEL = 8, 16, 10, 3
DILATIONS = (1, 2, 4)
BATCH, TIME = 2, 24

OWN_BUGS = ("paddle_dilation",)
OTHER_BUGS = ("causal_leak", "res_scale_const")


class ResidualBlock(nn.Layer):
    def __init__(self, channels, kernel, dilation):
        super().__init__()
        self.dilation = dilation
        self.left_pad = (kernel - 1) * dilation
        self.dilated = nn.Conv1D(channels, 2 * channels, kernel, dilation=dilation, data_format="NLC")
        self.res_conv = nn.Conv1D(channels, channels, 1, data_format="NLC")
        self.skip_conv = nn.Conv1D(channels, channels, 1, data_format="NLC")

    def forward(self, x):  # x [B, T, C]
        h = F.pad(x, [self.left_pad, 0], data_format="NLC")  # causal: only the past is padded
        h = self.dilated(h)
        filt, gate = paddle.chunk(h, 2, axis=-1)
        z = paddle.tanh(filt) * F.sigmoid(gate)
        return (x + self.res_conv(z)) * math.sqrt(0.5), self.skip_conv(z)


class WaveNet(nn.Layer):
    def __init__(self, dilations=DILATIONS):
        super().__init__()
        self.input_conv = nn.Conv1D(FEATS, CHANNELS, 1, data_format="NLC")
        self.layers = nn.LayerList([ResidualBlock(CHANNELS, KERNEL, d) for d in dilations])
        self.output = nn.Sequential(
            nn.ReLU(),
            nn.Conv1D(CHANNELS, CHANNELS, 1, data_format="NLC"),
            nn.ReLU(),
            nn.Conv1D(CHANNELS, OUT, 1, data_format="NLC"),
        )

    def forward(self, feats):  # [B, T, F] -> [B, T, OUT]
        x = self.input_conv(feats)
        skips = 0
        for layer in self.layers:
            x, s = layer(x)
            skips = skips + s
        return self.output(skips + x)


def model():
    paddle.seed(0)
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS + OTHER_BUGS:
        raise ValueError(f"port_tcn: unknown PADIFF_BUG {bug!r}")
    m = WaveNet(dilations=(1, 2, 2) if bug == "paddle_dilation" else DILATIONS)
    m.eval()
    return m


def _arrays():
    rng = np.random.default_rng(11)
    return rng.standard_normal((BATCH, TIME, FEATS)).astype("float32")


def inputs():
    return (paddle.to_tensor(_arrays()),), {}


def loss(output):
    # [B, T, OUT] from a 1x1 conv (no norm at the end): a mean of squares depends on every position
    return (output**2).mean()
