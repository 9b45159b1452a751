"""Hand-written port, torch side: a tiny NAFNet image-restoration U-Net (written by "person B").

The same math as port_nafnet_paddle.py, re-implemented by hand: input image [2, 3, 16, 16]
(positional), width 8, one NAFBlock in the encoder / bottleneck / decoder, a 2x2 stride-2 conv
down, a 1x1 conv + pixel shuffle up with a skip add, an ending 3x3 conv plus the input image.

Torch idioms on this side:
- root `TinyNAFNet`: flat named stages registered in call order: `head` (3x3 conv), `enc_block`,
  `downsample` (2x2 stride 2), `bottleneck`, `upsample` (PixelShuffleUp), `dec_block`, `tail`.
- `LayerNorm2d`: manual mean / biased variance over dim 1 of NCHW, eps 1e-6, parameters `g`,
  `b` of shape [1, c, 1, 1].
- `NAFBlock` registers `beta`, `gamma` ([c] vectors, broadcast with view) FIRST, then `norm1`,
  `pw_expand` (1x1, c -> 2c), `dw` (depthwise 3x3), `channel_attn` (ChannelAttention),
  `pw_proj` (1x1), `norm2`, `ffn_in` / `ffn_out` (nn.Linear on a channels-last view: the FFN's
  1x1 convs written as Linears). SimpleGate is inline (chunk + multiply), on dim 1 in the
  attention branch and on dim -1 in the channels-last FFN.
- `ChannelAttention`: x.mean((2, 3), keepdim=True) inline, then its `proj` 1x1 conv; returns
  the channel weights (the block multiplies).
- `PixelShuffleUp`: its `conv` (1x1, no bias) then a hand-written pixel shuffle (view / permute
  / reshape, channel c*4 + i*2 + j -> channel c, offset (i, j)).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_sca_sigmoid        -> ChannelAttention squashes its weights with a sigmoid (the RCAN /
                              SE habit; NAFNet's simplified channel attention has none)
  torch_pixel_shuffle_dcr  -> PixelShuffleUp unpacks the channels depth-first (view(B, 2, 2, C,
                              H, W), TF depth_to_space "DCR" order) instead of torch's
                              PixelShuffle order (view(B, C, 2, 2, H, W))
"""
import os

import numpy as np
import torch
from torch import nn

IN_CH, BASE = 3, 8
N, HW = 2, 16
OWN_BUGS = {"torch_sca_sigmoid", "torch_pixel_shuffle_dcr"}
OTHER_BUGS = {"paddle_ln_default_eps", "paddle_beta_gamma_swapped"}


class LayerNorm2d(nn.Module):
    def __init__(self, channels, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.g = nn.Parameter(torch.ones(1, channels, 1, 1))
        self.b = nn.Parameter(torch.zeros(1, channels, 1, 1))

    def forward(self, x):
        mu = x.mean(dim=1, keepdim=True)
        var = (x - mu).pow(2).mean(dim=1, keepdim=True)
        return (x - mu) / torch.sqrt(var + self.eps) * self.g + self.b


class ChannelAttention(nn.Module):
    def __init__(self, channels, sigmoid=False):
        super().__init__()
        self.sigmoid = sigmoid
        self.proj = nn.Conv2d(channels, channels, kernel_size=1, bias=True)

    def forward(self, x):
        w = self.proj(x.mean(dim=(2, 3), keepdim=True))
        return torch.sigmoid(w) if self.sigmoid else w


class NAFBlock(nn.Module):
    def __init__(self, dim, sca_sigmoid=False):
        super().__init__()
        self.beta = nn.Parameter(torch.zeros(dim))
        self.gamma = nn.Parameter(torch.zeros(dim))
        self.norm1 = LayerNorm2d(dim)
        self.pw_expand = nn.Conv2d(dim, 2 * dim, 1)
        self.dw = nn.Conv2d(2 * dim, 2 * dim, 3, padding=1, groups=2 * dim)
        self.channel_attn = ChannelAttention(dim, sca_sigmoid)
        self.pw_proj = nn.Conv2d(dim, dim, 1)
        self.norm2 = LayerNorm2d(dim)
        self.ffn_in = nn.Linear(dim, 2 * dim)
        self.ffn_out = nn.Linear(dim, dim)

    def forward(self, x):
        c = x.shape[1]
        h = self.dw(self.pw_expand(self.norm1(x)))
        a, b = h.chunk(2, dim=1)
        h = a * b
        h = h * self.channel_attn(h)
        x = x + self.pw_proj(h) * self.beta.view(1, c, 1, 1)
        h = self.norm2(x).permute(0, 2, 3, 1)  # NHWC
        a, b = self.ffn_in(h).chunk(2, dim=-1)
        h = self.ffn_out(a * b).permute(0, 3, 1, 2)
        return x + h * self.gamma.view(1, c, 1, 1)


class PixelShuffleUp(nn.Module):
    def __init__(self, in_ch, factor=2, dcr=False):
        super().__init__()
        self.r, self.dcr = factor, dcr
        self.conv = nn.Conv2d(in_ch, in_ch * factor, 1, bias=False)

    def forward(self, x):
        x = self.conv(x)
        n, c4, h, w = x.shape
        r = self.r
        c = c4 // (r * r)
        if self.dcr:
            x = x.view(n, r, r, c, h, w).permute(0, 3, 4, 1, 5, 2)
        else:
            x = x.view(n, c, r, r, h, w).permute(0, 1, 4, 2, 5, 3)
        return x.reshape(n, c, h * r, w * r)


class TinyNAFNet(nn.Module):
    def __init__(self, sca_sigmoid=False, dcr=False):
        super().__init__()
        self.head = nn.Conv2d(IN_CH, BASE, 3, padding=1)
        self.enc_block = NAFBlock(BASE, sca_sigmoid)
        self.downsample = nn.Conv2d(BASE, 2 * BASE, 2, stride=2)
        self.bottleneck = NAFBlock(2 * BASE, sca_sigmoid)
        self.upsample = PixelShuffleUp(2 * BASE, 2, dcr)
        self.dec_block = NAFBlock(BASE, sca_sigmoid)
        self.tail = nn.Conv2d(BASE, IN_CH, 3, padding=1)

    def forward(self, img):
        feat = self.head(img)
        skip = self.enc_block(feat)
        x = self.bottleneck(self.downsample(skip))
        x = self.dec_block(self.upsample(x) + skip)
        return self.tail(x) + img


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_nafnet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = TinyNAFNet(sca_sigmoid=bug == "torch_sca_sigmoid", dcr=bug == "torch_pixel_shuffle_dcr")
    return m.eval()


def _image():
    rng = np.random.default_rng(31)
    return rng.uniform(0.0, 1.0, (N, IN_CH, HW, HW)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # restored image [2, 3, 16, 16]
    return (output**2).mean()
