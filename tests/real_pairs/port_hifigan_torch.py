"""Hand-written port, torch side: a tiny HiFi-GAN generator (written by "person B").

The same math as port_hifigan_paddle.py, re-implemented by hand: mel [2, 8, 16] (positional)
-> waveform [2, 1, 128]. 8 mel bins -> in_conv (k 7) to 32 channels; two stages (transposed conv
rate 4 / kernel 8, then rate 2 / kernel 4; 32 -> 16 -> 8 channels), each followed by the mean of
two residual blocks (kernels 3 / 5, dilations 1 / 3); leaky ReLU 0.1, out_conv (k 7), tanh.

Torch idioms on this side:
- weight norm written by hand: `WNConv1d` / `WNConvTranspose1d` register `v` (the direction, the
  usual conv weight layout), then `g` (the magnitude, shape [C, 1, 1]: output channels for the
  conv, input channels for the transposed conv), then `bias`, and compute
  w = g * v / ||v|| (the norm over axes 1 and 2) in their forward through the module-level helper
  `_weight_norm`, then F.conv1d / F.conv_transpose1d.
- root `Generator`: `in_conv`, `stages` (ModuleList of UpStage), `out_act` (nn.LeakyReLU(0.1)),
  `out_conv`, `out_tanh` (nn.Tanh).
- `UpStage`: `act` (nn.LeakyReLU(0.1)), `up` (WNConvTranspose1d), `blocks` (ModuleList of
  ResBlock); forward: up(act(x)), then the mean of the blocks' outputs (torch.stack(...).mean(0)).
- `ResBlock`: `units` (ModuleList of DilatedUnit), applied in sequence.
- `DilatedUnit`: `pre_act`, `conv_dil` (dilation d), `mid_act`, `conv_1` (dilation 1); forward
  x + conv_1(mid_act(conv_dil(pre_act(x)))).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_wn_eps                  -> model() gives every weight-norm conv module eps = 1e-4, so
                                   `_weight_norm` divides by (||v|| + 1e-4) instead of ||v|| (a
                                   division-by-zero guard), in every conv (precision-level)
  torch_unit_residual_after_act -> DilatedUnit reassigns x = pre_act(x) before the branch, so the
                                   residual adds lrelu(x) instead of x
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

SLOPE = 0.1
MEL_CHANNELS, BASE_CHANNELS = 8, 32
UP_RATES, UP_KERNELS = [4, 2], [8, 4]
RB_KERNELS, RB_DILATIONS = [3, 5], [[1, 3], [1, 3]]
BATCH, N_FRAMES = 2, 16
OWN_BUGS = {"torch_wn_eps", "torch_unit_residual_after_act"}
OTHER_BUGS = {"paddle_mid_lrelu_slope", "paddle_mrf_no_average"}


def _weight_norm(g, v, eps=0.0):
    norm = v.pow(2).sum(dim=(1, 2), keepdim=True).sqrt()
    if eps:
        norm = norm + eps
    return g * v / norm


class WNConv1d(nn.Module):
    def __init__(self, c_in, c_out, kernel_size, dilation=1):
        super().__init__()
        self.padding = dilation * (kernel_size - 1) // 2
        self.dilation = dilation
        self.eps = 0.0
        v = torch.empty(c_out, c_in, kernel_size)
        nn.init.kaiming_uniform_(v, a=5**0.5)
        self.v = nn.Parameter(v)
        self.g = nn.Parameter(v.norm(dim=(1, 2), keepdim=True).clone())
        bound = 1.0 / (c_in * kernel_size) ** 0.5
        self.bias = nn.Parameter(torch.empty(c_out).uniform_(-bound, bound))

    def forward(self, x):
        return F.conv1d(x, _weight_norm(self.g, self.v, self.eps), self.bias, padding=self.padding, dilation=self.dilation)


class WNConvTranspose1d(nn.Module):
    def __init__(self, c_in, c_out, kernel_size, stride):
        super().__init__()
        self.stride = stride
        self.padding = (kernel_size - stride) // 2
        self.eps = 0.0
        v = torch.empty(c_in, c_out, kernel_size)
        nn.init.kaiming_uniform_(v, a=5**0.5)
        self.v = nn.Parameter(v)
        self.g = nn.Parameter(v.norm(dim=(1, 2), keepdim=True).clone())
        self.bias = nn.Parameter(torch.zeros(c_out))

    def forward(self, x):
        return F.conv_transpose1d(x, _weight_norm(self.g, self.v, self.eps), self.bias, stride=self.stride,
                                  padding=self.padding)


class DilatedUnit(nn.Module):
    def __init__(self, channels, kernel_size, dilation, residual_after_act=False):
        super().__init__()
        self.residual_after_act = residual_after_act
        self.pre_act = nn.LeakyReLU(SLOPE)
        self.conv_dil = WNConv1d(channels, channels, kernel_size, dilation)
        self.mid_act = nn.LeakyReLU(SLOPE)
        self.conv_1 = WNConv1d(channels, channels, kernel_size, 1)

    def forward(self, x):
        if self.residual_after_act:
            x = self.pre_act(x)
            return x + self.conv_1(self.mid_act(self.conv_dil(x)))
        return x + self.conv_1(self.mid_act(self.conv_dil(self.pre_act(x))))


class ResBlock(nn.Module):
    def __init__(self, channels, kernel_size, dilations, **kw):
        super().__init__()
        self.units = nn.ModuleList([DilatedUnit(channels, kernel_size, d, **kw) for d in dilations])

    def forward(self, x):
        for unit in self.units:
            x = unit(x)
        return x


class UpStage(nn.Module):
    def __init__(self, c_in, c_out, rate, kernel, **kw):
        super().__init__()
        self.act = nn.LeakyReLU(SLOPE)
        self.up = WNConvTranspose1d(c_in, c_out, kernel, rate)
        self.blocks = nn.ModuleList([ResBlock(c_out, k, d, **kw) for k, d in zip(RB_KERNELS, RB_DILATIONS)])

    def forward(self, x):
        x = self.up(self.act(x))
        return torch.stack([block(x) for block in self.blocks]).mean(dim=0)


class Generator(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.in_conv = WNConv1d(MEL_CHANNELS, BASE_CHANNELS, 7)
        stages = []
        ch = BASE_CHANNELS
        for rate, kernel in zip(UP_RATES, UP_KERNELS):
            stages.append(UpStage(ch, ch // 2, rate, kernel, **kw))
            ch //= 2
        self.stages = nn.ModuleList(stages)
        self.out_act = nn.LeakyReLU(SLOPE)
        self.out_conv = WNConv1d(ch, 1, 7)
        self.out_tanh = nn.Tanh()

    def forward(self, mel):
        x = self.in_conv(mel)
        for stage in self.stages:
            x = stage(x)
        return self.out_tanh(self.out_conv(self.out_act(x)))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_hifigan torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = Generator(residual_after_act=bug == "torch_unit_residual_after_act")
    if bug == "torch_wn_eps":
        for mod in m.modules():
            if isinstance(mod, (WNConv1d, WNConvTranspose1d)):
                mod.eps = 1e-4
    return m.eval()


def _mel():
    rng = np.random.default_rng(41)
    return rng.standard_normal((BATCH, MEL_CHANNELS, N_FRAMES)).astype("float32")


def inputs():
    return (torch.from_numpy(_mel()),), {}


def loss(output):
    # waveform [2, 1, 128]
    return (output**2).mean()
