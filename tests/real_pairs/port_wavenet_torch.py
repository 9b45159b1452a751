"""Hand-written port, torch side: a tiny autoregressive WaveNet over mu-law tokens (written by "person B").

The same network as port_wavenet_paddle.py, re-implemented by hand: 32 mu-law levels, 16
residual channels, 24 skip channels, kernel 2, 4 layers, batch 2, 32 steps; input int64 tokens
[2, 32], output logits [2, 32, 32] (batch, time, class).

Torch idioms on this side, everything CHANNELS-FIRST [B, C, T]:
- root `WaveNet`: the tokens are one-hot encoded inline (F.one_hot -> [B, 32, T]) and fed to
  `start_conv` = nn.Conv1d(32, 16, 1, bias=False) (the original WaveNet's input layer; the
  paddle side uses an embedding lookup). `layers` = ModuleList of `WaveNetLayer`, whose
  dilations are computed the usual WaveNet way, 2 ** (i % DILATION_CYCLE) with a cycle of 4.
  `end` = nn.Sequential(ReLU, Conv1d 24 -> 24 (1x1), ReLU, Conv1d 24 -> 32 (1x1)); the result is
  transposed to [B, T, 32].
- `WaveNetLayer`: ONE packed dilated conv `dil_conv` = nn.Conv1d(16, 32, 2, dilation=d) whose
  output channels 0:16 are the tanh filter and 16:32 the sigmoid gate (chunk(2, dim=1)); causal
  padding by F.pad(x, (d, 0)) on the LEFT (no crop); `conv_res` (1x1, 16 -> 16) and
  `conv_skip` (1x1, 16 -> 24) are nn.Conv1d; returns (x + conv_res(z), conv_skip(z)).

Planted bugs (PADIFF_BUG), see port_wavenet_truth.json; the paddle side's bug name is accepted
and ignored, any other name raises ValueError:
  torch_gate_swapped   -> the packed conv output is unpacked as `gate, filt = h.chunk(2, 1)`
                          (halves swapped: tanh on the gate half, sigmoid on the filter half),
                          in every layer
  torch_dilation_cycle -> DILATION_CYCLE typed 3 instead of 4, so the dilations are 1, 2, 4, 1:
                          the last layer looks 1 step back instead of 8 (consistently padded,
                          still causal, but a shorter receptive field)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

LEVELS, RES_CH, SKIP_CH, KERNEL = 32, 16, 24, 2
N_LAYERS, DILATION_CYCLE = 4, 4
BATCH, TIME = 2, 32
OWN_BUGS = {"torch_gate_swapped", "torch_dilation_cycle"}
OTHER_BUGS = {"paddle_crop_head"}


class WaveNetLayer(nn.Module):
    def __init__(self, dilation, swap_gate=False):
        super().__init__()
        self.dilation = dilation
        self.swap_gate = swap_gate
        self.dil_conv = nn.Conv1d(RES_CH, 2 * RES_CH, KERNEL, dilation=dilation)
        self.conv_res = nn.Conv1d(RES_CH, RES_CH, 1)
        self.conv_skip = nn.Conv1d(RES_CH, SKIP_CH, 1)

    def forward(self, x):  # [B, C, T]
        h = self.dil_conv(F.pad(x, ((KERNEL - 1) * self.dilation, 0)))
        if self.swap_gate:
            gate, filt = h.chunk(2, dim=1)
        else:
            filt, gate = h.chunk(2, dim=1)
        z = torch.tanh(filt) * torch.sigmoid(gate)
        return x + self.conv_res(z), self.conv_skip(z)


class WaveNet(nn.Module):
    def __init__(self, swap_gate=False, cycle=DILATION_CYCLE):
        super().__init__()
        self.start_conv = nn.Conv1d(LEVELS, RES_CH, 1, bias=False)
        self.layers = nn.ModuleList(WaveNetLayer(2 ** (i % cycle), swap_gate) for i in range(N_LAYERS))
        self.end = nn.Sequential(
            nn.ReLU(),
            nn.Conv1d(SKIP_CH, SKIP_CH, 1),
            nn.ReLU(),
            nn.Conv1d(SKIP_CH, LEVELS, 1),
        )

    def forward(self, tokens):  # [B, T] int64
        x = self.start_conv(F.one_hot(tokens, LEVELS).float().transpose(1, 2))
        skip = 0
        for layer in self.layers:
            x, s = layer(x)
            skip = skip + s
        return self.end(skip).transpose(1, 2)  # [B, T, LEVELS]


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_wavenet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = WaveNet(swap_gate=bug == "torch_gate_swapped", cycle=3 if bug == "torch_dilation_cycle" else DILATION_CYCLE)
    return m.eval()


def _mulaw_tokens():
    rng = np.random.default_rng(5)
    t = np.arange(TIME + 1)[None, :] + rng.integers(0, 50, (BATCH, 1))
    wav = 0.6 * np.sin(2 * np.pi * t / 11.0) + 0.3 * np.sin(2 * np.pi * t / 4.3) + 0.05 * rng.standard_normal(t.shape)
    wav = np.clip(wav, -1.0, 1.0)
    mu = LEVELS - 1
    y = np.sign(wav) * np.log1p(mu * np.abs(wav)) / np.log1p(mu)
    return np.clip(((y + 1) / 2 * mu + 0.5).astype("int64"), 0, mu)


def inputs():
    return (torch.from_numpy(_mulaw_tokens()[:, :TIME]),), {}


def loss(output):
    # logits [2, 32, 32]; next-step cross entropy
    target = torch.from_numpy(_mulaw_tokens()[:, 1:])
    return F.cross_entropy(output.reshape(-1, LEVELS), target.reshape(-1))
