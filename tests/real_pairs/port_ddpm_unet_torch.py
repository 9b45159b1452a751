"""Hand-written port, torch side: a tiny DDPM noise-prediction U-Net (written by "person B").

The same math as port_ddpm_unet_paddle.py, re-implemented by hand in the style of lucidrains'
denoising-diffusion-pytorch: inputs `x` [2, 3, 16, 12] and int64 timesteps `t` [2] =
[17, 642] (positional), output the predicted noise [2, 3, 16, 12]. Sinusoidal time embedding
(16 dims, [sin | cos], frequencies exp(-log(10000) k / 7)) -> Linear(16, 64) -> SiLU ->
Linear(64, 64); six ResBlocks (GN(8 groups, eps 1e-6) -> SiLU -> conv3x3, + time term,
GN -> SiLU -> conv3x3, + 1x1 shortcut when channels change); down-sampling F.pad(0, 1, 0, 1) +
conv 3x3 stride 2; up-sampling nearest x2 + conv 3x3; single-head self-attention with a
pre-GroupNorm and a residual at 4 x 3; skip concatenation [h, skip].

Torch idioms on this side:
- root `Unet` registers `time_mlp` = nn.Sequential(SinusoidalPosEmb(16), Linear, SiLU, Linear),
  then ONE packed `time_proj` nn.Linear(64, 160) that projects SiLU(temb) for ALL SIX ResBlocks
  at once; the root forward splits it (torch.split, sizes 16, 32, 32, 32, 32, 16 in call order:
  downs.0, downs.1, mid_block1, mid_block2, ups.0, ups.1) and hands each block its [B, out]
  slice. Then `init_conv`, `downs` (ModuleList of ModuleList[ResBlock, Downsample]),
  `mid_block1`, `mid_attn`, `mid_block2`, `ups` (ModuleList of ModuleList[upsample, ResBlock]),
  `final_norm`, `final_act` (nn.SiLU), `final_conv`.
- `ResBlock(x, time_term)`: `norm1`, `conv1`, `norm2`, `dropout` (nn.Dropout(0.1), identity in
  eval), `conv2`, `res_conv` (1x1 conv or nn.Identity), ONE `act` nn.SiLU module called twice.
  It has no time projection of its own.
- `Downsample`: F.pad(x, (0, 1, 0, 1)) inline, then its `conv` (3x3, stride 2, padding 0).
- upsample = nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d).
- `AttentionBlock`: `norm` (GroupNorm), then `attn` = nn.MultiheadAttention(32, 1,
  batch_first=True) on [B, H*W, C] tokens (packed in_proj_weight q | k | v, out_proj).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_down_pad_symmetric        -> Downsample is written as nn.Conv2d(c, c, 3, stride=2,
                                     padding=1) with no F.pad, the usual torch idiom: it pads
                                     top / left too, which shifts every stride-2 window by one
                                     pixel up / left
  torch_attn_reshape_no_transpose -> AttentionBlock turns the [B, H*W, C] attention output back
                                     into a map with .reshape(b, c, h, w) without the
                                     transpose(1, 2)
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

BATCH, IMG_H, IMG_W = 2, 16, 12
DIM, TIME_IN, TIME_DIM, GROUPS = 16, 16, 64, 8
TIMESTEPS = (17, 642)
OWN_BUGS = {"torch_down_pad_symmetric", "torch_attn_reshape_no_transpose"}
OTHER_BUGS = {"paddle_temb_cos_sin", "paddle_gn_unbiased_var"}


class SinusoidalPosEmb(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        half_dim = self.dim // 2
        emb = math.log(10000) / (half_dim - 1)
        emb = torch.exp(torch.arange(half_dim, device=x.device) * -emb)
        emb = x.float()[:, None] * emb[None, :]
        return torch.cat((emb.sin(), emb.cos()), dim=-1)


class ResBlock(nn.Module):
    def __init__(self, dim, dim_out, dropout=0.1):
        super().__init__()
        self.norm1 = nn.GroupNorm(GROUPS, dim, eps=1e-6)
        self.conv1 = nn.Conv2d(dim, dim_out, 3, padding=1)
        self.norm2 = nn.GroupNorm(GROUPS, dim_out, eps=1e-6)
        self.dropout = nn.Dropout(dropout)
        self.conv2 = nn.Conv2d(dim_out, dim_out, 3, padding=1)
        self.res_conv = nn.Conv2d(dim, dim_out, 1) if dim != dim_out else nn.Identity()
        self.act = nn.SiLU()

    def forward(self, x, time_term):
        h = self.conv1(self.act(self.norm1(x)))
        h = h + time_term[:, :, None, None]
        h = self.conv2(self.dropout(self.act(self.norm2(h))))
        return h + self.res_conv(x)


class Downsample(nn.Module):
    def __init__(self, dim, symmetric_pad=False):
        super().__init__()
        self.symmetric_pad = symmetric_pad
        if symmetric_pad:
            self.conv = nn.Conv2d(dim, dim, 3, stride=2, padding=1)
        else:
            self.conv = nn.Conv2d(dim, dim, 3, stride=2, padding=0)

    def forward(self, x):
        if not self.symmetric_pad:
            x = F.pad(x, (0, 1, 0, 1))
        return self.conv(x)


def upsample(dim):
    return nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(dim, dim, 3, padding=1))


class AttentionBlock(nn.Module):
    def __init__(self, dim, no_transpose=False):
        super().__init__()
        self.no_transpose = no_transpose
        self.norm = nn.GroupNorm(GROUPS, dim, eps=1e-6)
        self.attn = nn.MultiheadAttention(dim, 1, batch_first=True)

    def forward(self, x):
        b, c, h, w = x.shape
        tokens = self.norm(x).reshape(b, c, h * w).transpose(1, 2)  # [B, HW, C]
        out, _ = self.attn(tokens, tokens, tokens, need_weights=False)
        if self.no_transpose:
            out = out.reshape(b, c, h, w)
        else:
            out = out.transpose(1, 2).reshape(b, c, h, w)
        return x + out


class Unet(nn.Module):
    def __init__(self, symmetric_pad=False, attn_no_transpose=False):
        super().__init__()
        self.time_mlp = nn.Sequential(
            SinusoidalPosEmb(TIME_IN),
            nn.Linear(TIME_IN, TIME_DIM),
            nn.SiLU(),
            nn.Linear(TIME_DIM, TIME_DIM),
        )
        # one packed projection of the time embedding for every ResBlock, in call order
        self.time_sizes = [DIM, 2 * DIM, 2 * DIM, 2 * DIM, 2 * DIM, DIM]
        self.time_proj = nn.Linear(TIME_DIM, sum(self.time_sizes))
        self.init_conv = nn.Conv2d(3, DIM, 3, padding=1)
        self.downs = nn.ModuleList([
            nn.ModuleList([ResBlock(DIM, DIM), Downsample(DIM, symmetric_pad)]),
            nn.ModuleList([ResBlock(DIM, 2 * DIM), Downsample(2 * DIM, symmetric_pad)]),
        ])
        self.mid_block1 = ResBlock(2 * DIM, 2 * DIM)
        self.mid_attn = AttentionBlock(2 * DIM, attn_no_transpose)
        self.mid_block2 = ResBlock(2 * DIM, 2 * DIM)
        self.ups = nn.ModuleList([
            nn.ModuleList([upsample(2 * DIM), ResBlock(4 * DIM, 2 * DIM)]),
            nn.ModuleList([upsample(2 * DIM), ResBlock(3 * DIM, DIM)]),
        ])
        self.final_norm = nn.GroupNorm(GROUPS, DIM, eps=1e-6)
        self.final_act = nn.SiLU()
        self.final_conv = nn.Conv2d(DIM, 3, 3, padding=1)

    def forward(self, x, t):
        temb = self.time_mlp(t)
        terms = list(torch.split(self.time_proj(F.silu(temb)), self.time_sizes, dim=1))
        x = self.init_conv(x)
        hs = []
        for block, down in self.downs:
            x = block(x, terms.pop(0))
            hs.append(x)
            x = down(x)
        x = self.mid_block1(x, terms.pop(0))
        x = self.mid_attn(x)
        x = self.mid_block2(x, terms.pop(0))
        for up, block in self.ups:
            x = up(x)
            x = torch.cat((x, hs.pop()), dim=1)
            x = block(x, terms.pop(0))
        return self.final_conv(self.final_act(self.final_norm(x)))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_ddpm_unet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = Unet(symmetric_pad=bug == "torch_down_pad_symmetric",
             attn_no_transpose=bug == "torch_attn_reshape_no_transpose")
    return m.eval()


def _noisy():
    return np.random.default_rng(31).standard_normal((BATCH, 3, IMG_H, IMG_W)).astype("float32")


def inputs():
    return (torch.from_numpy(_noisy()), torch.from_numpy(np.array(TIMESTEPS, dtype="int64"))), {}


def loss(output):
    # predicted noise [2, 3, 16, 12]
    return (output**2).mean()
