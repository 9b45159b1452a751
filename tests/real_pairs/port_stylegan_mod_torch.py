"""Hand-written port, torch side: a tiny StyleGAN2 generator (written by "person B").

The same function as port_stylegan_mod_paddle.py, re-implemented by hand in the style of
rosinality's stylegan2-pytorch (EqualLinear / ModulatedConv2d / StyledConv / ToRGB). Sizes: z
[2, 16], w_dim 32, 3 mapping layers, 16 channels, 4x4 -> 8x8, image [2, 3, 8, 8].

Torch idioms on this side:
- root `Generator` registers `style` = nn.Sequential(PixelNorm, EqualLinear x 3), `input`
  (ConstantInput: parameter `input` [1, 16, 4, 4] repeated over the batch; it is called with w
  only to read the batch size), `conv1` (StyledConv 4x4), `to_rgb1`, `convs` (ModuleList:
  StyledConv with upsample, StyledConv), `to_rgbs` (ModuleList: one ToRGB), and `noises`, an
  empty nn.Module holding the FIXED noise buffers `noise_0` [1, 1, 4, 4], `noise_1`,
  `noise_2` [1, 1, 8, 8] (numpy rng, same seeds as the paddle side, non-persistent).
- `PixelNorm` module: x * rsqrt(mean(x^2, dim=1) + 1e-8).
- `EqualLinear`: weight [out, in] randn (torch layout), scale 1/sqrt(in) applied in forward;
  with activation="fused_lrelu" the bias goes INTO the activation: leaky_relu(xW^T + b, 0.2) *
  sqrt(2) (fused_leaky_relu); `bias_init=1` for the style affines (`modulation`).
- `StyledConv`: `conv` (ModulatedConv2d), `noise` (NoiseInjection: `weight` [1]), `activate`
  (FusedLeakyReLU: owns the conv bias [16]).
- `ModulatedConv2d`: weight [1, out, in, 3, 3], scale 1/sqrt(in * 9) applied (before the
  demodulation), `modulation` EqualLinear(32, in, bias_init=1); the nearest x2 upsample is inline
  at the top of its forward (upsample=True); the modulated / demodulated conv is a PER-SAMPLE
  LOOP of F.conv2d (one [out, in, 3, 3] kernel per sample), demodulated by rsqrt(sum over
  in, kh, kw of w^2 + 1e-8).
- `ToRGB`: `modulation`, `weight` [1, 3, in, 1, 1], `bias` [1, 3, 1, 1]; the un-demodulated 1x1
  modulated conv is an EINSUM; the previous RGB (`skip`) is upsampled bilinearly (align_corners
  False) and added INSIDE ToRGB.forward.

PADIFF_BUG names planted on this side:
  torch_lrelu_no_gain  -> EqualLinear's fused activation is F.leaky_relu(x + b, 0.2) without
                          the sqrt(2) gain (all three mapping layers)
  torch_torgb_no_eqlr  -> ToRGB forgets the equalised-lr scale 1/sqrt(in_channel) on its 1x1
                          weight (the hand-written einsum path, both ToRGB layers)
The paddle side's bug names are accepted and ignored; any other name raises ValueError.
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

Z_DIM, W_DIM, CH, IMG_CH = 16, 32, 16, 3
BATCH = 2
OWN_BUGS = {"torch_lrelu_no_gain", "torch_torgb_no_eqlr"}
OTHER_BUGS = {"paddle_pixelnorm_l2", "paddle_demod_wrong_axis"}


def fused_leaky_relu(x, bias, negative_slope=0.2, scale=2**0.5):
    shape = (1, -1) + (1,) * (x.dim() - 2)
    return F.leaky_relu(x + bias.view(shape), negative_slope) * scale


class PixelNorm(nn.Module):
    def forward(self, x):
        return x * torch.rsqrt(torch.mean(x**2, dim=1, keepdim=True) + 1e-8)


class EqualLinear(nn.Module):
    def __init__(self, in_dim, out_dim, bias_init=0.0, activation=None, no_gain=False):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_dim, in_dim))
        self.bias = nn.Parameter(torch.zeros(out_dim).fill_(bias_init))
        self.scale = 1 / math.sqrt(in_dim)
        self.activation = activation
        self.no_gain = no_gain

    def forward(self, x):
        if self.activation:
            out = F.linear(x, self.weight * self.scale)
            if self.no_gain:
                return F.leaky_relu(out + self.bias, 0.2)
            return fused_leaky_relu(out, self.bias)
        return F.linear(x, self.weight * self.scale, bias=self.bias)


class ConstantInput(nn.Module):
    def __init__(self, channel, size=4):
        super().__init__()
        self.input = nn.Parameter(torch.randn(1, channel, size, size))

    def forward(self, latent):
        return self.input.repeat(latent.shape[0], 1, 1, 1)


class ModulatedConv2d(nn.Module):
    def __init__(self, in_channel, out_channel, kernel_size, style_dim, demodulate=True, upsample=False):
        super().__init__()
        self.padding = kernel_size // 2
        self.demodulate = demodulate
        self.upsample = upsample
        self.scale = 1 / math.sqrt(in_channel * kernel_size**2)
        self.weight = nn.Parameter(torch.randn(1, out_channel, in_channel, kernel_size, kernel_size))
        self.modulation = EqualLinear(style_dim, in_channel, bias_init=1)

    def forward(self, x, style):
        style = self.modulation(style)  # [B, in]
        if self.upsample:
            x = F.interpolate(x, scale_factor=2, mode="nearest")
        outs = []
        for b in range(x.shape[0]):
            weight = self.scale * self.weight[0] * style[b].view(1, -1, 1, 1)  # [out, in, k, k]
            if self.demodulate:
                weight = weight * torch.rsqrt(weight.pow(2).sum(dim=(1, 2, 3), keepdim=True) + 1e-8)
            outs.append(F.conv2d(x[b : b + 1], weight, padding=self.padding))
        return torch.cat(outs, dim=0)


class NoiseInjection(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(1))

    def forward(self, image, noise):
        return image + self.weight * noise


class FusedLeakyReLU(nn.Module):
    def __init__(self, channel):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(channel))

    def forward(self, x):
        return fused_leaky_relu(x, self.bias)


class StyledConv(nn.Module):
    def __init__(self, in_channel, out_channel, kernel_size, style_dim, upsample=False):
        super().__init__()
        self.conv = ModulatedConv2d(in_channel, out_channel, kernel_size, style_dim, upsample=upsample)
        self.noise = NoiseInjection()
        self.activate = FusedLeakyReLU(out_channel)

    def forward(self, x, style, noise):
        out = self.conv(x, style)
        out = self.noise(out, noise=noise)
        return self.activate(out)


class ToRGB(nn.Module):
    def __init__(self, in_channel, style_dim, no_eqlr=False):
        super().__init__()
        self.modulation = EqualLinear(style_dim, in_channel, bias_init=1)
        self.weight = nn.Parameter(torch.randn(1, IMG_CH, in_channel, 1, 1))
        self.bias = nn.Parameter(torch.zeros(1, IMG_CH, 1, 1))
        self.scale = 1 / math.sqrt(in_channel)
        self.no_eqlr = no_eqlr

    def forward(self, x, style, skip=None):
        s = self.modulation(style)  # [B, in]
        weight = self.weight[0, :, :, 0, 0]  # [3, in]
        if not self.no_eqlr:
            weight = weight * self.scale
        out = torch.einsum("bihw,oi,bi->bohw", x, weight, s) + self.bias
        if skip is not None:
            out = out + F.interpolate(skip, scale_factor=2, mode="bilinear", align_corners=False)
        return out


class Generator(nn.Module):
    def __init__(self, lrelu_no_gain=False, torgb_no_eqlr=False):
        super().__init__()
        layers = [PixelNorm()]
        for i in range(3):
            layers.append(
                EqualLinear(Z_DIM if i == 0 else W_DIM, W_DIM, activation="fused_lrelu", no_gain=lrelu_no_gain)
            )
        self.style = nn.Sequential(*layers)
        self.input = ConstantInput(CH)
        self.conv1 = StyledConv(CH, CH, 3, W_DIM)
        self.to_rgb1 = ToRGB(CH, W_DIM, no_eqlr=torgb_no_eqlr)
        self.convs = nn.ModuleList([StyledConv(CH, CH, 3, W_DIM, upsample=True), StyledConv(CH, CH, 3, W_DIM)])
        self.to_rgbs = nn.ModuleList([ToRGB(CH, W_DIM, no_eqlr=torgb_no_eqlr)])
        self.noises = nn.Module()
        for i, res in enumerate((4, 8, 8)):
            noise = np.random.default_rng(1000 + i).standard_normal((res, res)).astype("float32")
            self.noises.register_buffer(f"noise_{i}", torch.from_numpy(noise).view(1, 1, res, res), persistent=False)

    def forward(self, z):
        w = self.style(z)
        noise = [getattr(self.noises, f"noise_{i}") for i in range(3)]
        out = self.input(w)
        out = self.conv1(out, w, noise=noise[0])
        skip = self.to_rgb1(out, w)
        out = self.convs[0](out, w, noise=noise[1])
        out = self.convs[1](out, w, noise=noise[2])
        return self.to_rgbs[0](out, w, skip)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_stylegan_mod torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = Generator(lrelu_no_gain=bug == "torch_lrelu_no_gain", torgb_no_eqlr=bug == "torch_torgb_no_eqlr")
    return m.eval()


def _z():
    return np.random.default_rng(45).standard_normal((BATCH, Z_DIM)).astype("float32")


def inputs():
    return (torch.from_numpy(_z()),), {}


def loss(output):
    # images [2, 3, 8, 8]
    return (output**2).mean()
