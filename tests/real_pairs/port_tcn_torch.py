"""Hand-written port, torch side: a small WaveNet-style causal TCN (written by "person B").

Same math as port_tcn_paddle.py, in torch's idioms:
  - the input [B, T, F] goes through `stem` = nn.Linear(8, 16) (the paddle side's 1x1 conv) and is
    then transposed to channels-first [B, C, T] for the whole stack, and back at the end;
  - each GatedBlock has TWO dilated convs, `conv_filter` and `conv_gate` (16 -> 16 each, the two
    halves of the paddle side's single 16 -> 32 conv), both wrapped in weight normalization
    (torch.nn.utils.parametrizations.weight_norm, dim=0: weight = g * v / ||v|| per output channel);
  - causal padding the "symmetric conv + slice" way: Conv1d(padding=(K-1)*d) pads both ends, and
    the last (K-1)*d outputs (the ones that saw the future) are sliced off;
  - registration order skip before residual; torch.tanh / torch.sigmoid functional;
  - the head is `post1` / `post2` (1x1 Conv1d) with F.relu functional.

Planted bugs (PADIFF_BUG), see port_tcn_truth.json:
  causal_leak     -> block 1 slices the HEAD off instead of the tail ([..., pad:] instead of
                     [..., :-pad]): every output sees 4 steps of the future and none of the past
  res_scale_const -> every block scales (x + residual) by the constant 0.707 instead of sqrt(0.5)
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.parametrizations import weight_norm

FEATS, CHANNELS, OUT, KERNEL = 8, 16, 10, 3
DILATIONS = (1, 2, 4)
BATCH, TIME = 2, 24

OWN_BUGS = ("causal_leak", "res_scale_const")
OTHER_BUGS = ("paddle_dilation",)


class GatedBlock(nn.Module):
    res_scale = math.sqrt(0.5)

    def __init__(self, channels, kernel, dilation):
        super().__init__()
        self.pad = (kernel - 1) * dilation
        self.trim_head = False  # the causal_leak bug
        self.conv_filter = weight_norm(nn.Conv1d(channels, channels, kernel, padding=self.pad, dilation=dilation))
        self.conv_gate = weight_norm(nn.Conv1d(channels, channels, kernel, padding=self.pad, dilation=dilation))
        self.skip = nn.Conv1d(channels, channels, 1)
        self.residual = nn.Conv1d(channels, channels, 1)

    def _causal(self, y):  # drop the outputs that looked at the future
        return y[..., self.pad :] if self.trim_head else y[..., : -self.pad]

    def forward(self, x):  # x [B, C, T]
        z = torch.tanh(self._causal(self.conv_filter(x))) * torch.sigmoid(self._causal(self.conv_gate(x)))
        return (x + self.residual(z)) * self.res_scale, self.skip(z)


class TemporalConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(FEATS, CHANNELS)
        self.blocks = nn.ModuleList(GatedBlock(CHANNELS, KERNEL, d) for d in DILATIONS)
        self.post1 = nn.Conv1d(CHANNELS, CHANNELS, 1)
        self.post2 = nn.Conv1d(CHANNELS, OUT, 1)

    def forward(self, x):  # [B, T, F] -> [B, T, OUT]
        h = self.stem(x).transpose(1, 2)
        skip_sum = torch.zeros_like(h)
        for block in self.blocks:
            h, s = block(h)
            skip_sum = skip_sum + s
        y = self.post2(F.relu(self.post1(F.relu(skip_sum + h))))
        return y.transpose(1, 2)


def model():
    torch.manual_seed(0)
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS + OTHER_BUGS:
        raise ValueError(f"port_tcn: unknown PADIFF_BUG {bug!r}")
    m = TemporalConvNet()
    m.eval()
    if bug == "causal_leak":
        m.blocks[1].trim_head = True
    elif bug == "res_scale_const":
        for block in m.blocks:
            block.res_scale = 0.707
    return m


def _arrays():
    rng = np.random.default_rng(11)
    return rng.standard_normal((BATCH, TIME, FEATS)).astype("float32")


def inputs():
    return (torch.from_numpy(_arrays()),), {}


def loss(output):
    # [B, T, OUT] from a 1x1 conv (no norm at the end): a mean of squares depends on every position
    return (output**2).mean()
