"""Hand-written port, torch side: a tiny XCiT (written by "person B").

The same math as port_xcit_paddle.py, re-implemented by hand in a timm-like style: 32x32 RGB
images, a conv stem (3 -> 16 -> 32, two 3x3 stride-2 convs each with BatchNorm2d, GELU between)
to an 8x8 grid of width 32, Fourier positional features (8 per axis, sin / cos) projected to 32
and added, 2 XCiT layers (cross-covariance attention with 4 heads of 8 channels, local patch
interaction, MLP 32 -> 64 -> 32, LayerScale on each branch), final LayerNorm, mean over tokens,
Linear(32, 10): logits [2, 10]. LayerNorm eps 1e-6, exact GELU.

Torch idioms on this side:
- root `XCiTNet`: `stem` (`ConvStem`: conv1, bn1, conv2, bn2, F.gelu inline), `pos_embed`
  (`FourierPosEmbed`: the features are a non-persistent buffer `fourier` [64, 16] built once in
  __init__ for the fixed 8x8 grid; `proj` is an nn.Linear(16, 32); forward() takes no tensor
  and returns [64, 32]), `layers` (ModuleList), `norm`, `head`.
- `XCiTLayer` numbers its parts in CALL order: `norm1`, `attn`, `ls1`, `norm2`, `lpi`, `ls2`,
  `norm3`, `mlp`, `ls3` (so this side's norm2 / ls2 are the LPI branch's, norm3 / ls3 the
  MLP's). `LayerScale` is a module holding `gamma` [32].
- `CrossCovAttention`: ONE fused `qkv` Linear(32, 96) (q | k | v), `log_temp` [heads] (the
  temperature is kept in log space and exponentiated in the forward), `proj`; q / k / v stay
  [B, h, N, c] and the channel attention is written with einsum, normalising over dim 2 (the
  tokens).
- `LocalPatchInteraction`: `dw1` (depthwise), `norm` (BatchNorm2d), `dw2`, with F.gelu inline;
  the grid size is fixed at construction.
- `FeedForward`: `fc1`, `act` (nn.GELU module), `fc2`.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_lpi_bn_before_act -> LocalPatchInteraction runs dw1 -> BN -> GELU -> dw2 (the usual
                             conv-BN-act order) instead of dw1 -> GELU -> BN -> dw2
  torch_fourier_no_floor  -> the Fourier buffer's frequencies use 10000^(2 i / 8) instead of
                             10000^(2 floor(i / 2) / 8) (the floor division dropped): every
                             feature column but the first gets a wrong frequency
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IMG, EMBED, HEADS, N_CLASSES, BATCH, DEPTH = 32, 32, 4, 10, 2, 2
GRID, FOURIER = 8, 8
OWN_BUGS = {"torch_lpi_bn_before_act", "torch_fourier_no_floor"}
OTHER_BUGS = {"paddle_xca_norm_channels", "paddle_fourier_scale_628"}


class ConvStem(nn.Module):
    def __init__(self, dim=EMBED):
        super().__init__()
        self.conv1 = nn.Conv2d(3, dim // 2, 3, 2, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(dim // 2)
        self.conv2 = nn.Conv2d(dim // 2, dim, 3, 2, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(dim)

    def forward(self, x):
        x = F.gelu(self.bn1(self.conv1(x)))
        return self.bn2(self.conv2(x))


def fourier_features(grid, hidden, no_floor=False, temperature=10000.0):
    ones = torch.ones(grid, grid)
    eps, scale = 1e-6, 2 * math.pi
    y = ones.cumsum(0)
    x = ones.cumsum(1)
    y = y / (y[-1:, :] + eps) * scale
    x = x / (x[:, -1:] + eps) * scale
    i = torch.arange(hidden, dtype=torch.float32)
    expo = 2 * i / hidden if no_floor else 2 * torch.div(i, 2, rounding_mode="floor") / hidden
    freq = temperature**expo
    px, py = x[..., None] / freq, y[..., None] / freq
    px = torch.stack((px[..., 0::2].sin(), px[..., 1::2].cos()), dim=3).flatten(2)
    py = torch.stack((py[..., 0::2].sin(), py[..., 1::2].cos()), dim=3).flatten(2)
    return torch.cat((py, px), dim=2).reshape(grid * grid, 2 * hidden)


class FourierPosEmbed(nn.Module):
    def __init__(self, grid=GRID, hidden=FOURIER, dim=EMBED, no_floor=False):
        super().__init__()
        self.register_buffer("fourier", fourier_features(grid, hidden, no_floor), persistent=False)
        self.proj = nn.Linear(2 * hidden, dim)

    def forward(self):
        return self.proj(self.fourier)


class CrossCovAttention(nn.Module):
    def __init__(self, dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.log_temp = nn.Parameter(torch.zeros(num_heads))
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)  # [B, h, N, c]
        q = F.normalize(q, dim=2)
        k = F.normalize(k, dim=2)
        attn = torch.einsum("bhnc,bhnd->bhcd", q, k) * self.log_temp.exp()[:, None, None]
        attn = attn.softmax(dim=-1)
        out = torch.einsum("bhcd,bhnd->bhnc", attn, v)
        return self.proj(out.transpose(1, 2).reshape(B, N, C))


class LocalPatchInteraction(nn.Module):
    def __init__(self, dim, grid=GRID, bn_first=False):
        super().__init__()
        self.grid, self.bn_first = grid, bn_first
        self.dw1 = nn.Conv2d(dim, dim, 3, padding=1, groups=dim)
        self.norm = nn.BatchNorm2d(dim)
        self.dw2 = nn.Conv2d(dim, dim, 3, padding=1, groups=dim)

    def forward(self, x):
        B, N, C = x.shape
        x = x.transpose(1, 2).reshape(B, C, self.grid, self.grid)
        x = self.dw1(x)
        if self.bn_first:
            x = F.gelu(self.norm(x))
        else:
            x = self.norm(F.gelu(x))
        x = self.dw2(x)
        return x.reshape(B, C, N).transpose(1, 2)


class FeedForward(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class LayerScale(nn.Module):
    def __init__(self, dim, init=1.0):
        super().__init__()
        self.gamma = nn.Parameter(init * torch.ones(dim))

    def forward(self, x):
        return x * self.gamma


class XCiTLayer(nn.Module):
    def __init__(self, dim, num_heads, bn_first=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = CrossCovAttention(dim, num_heads)
        self.ls1 = LayerScale(dim)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.lpi = LocalPatchInteraction(dim, bn_first=bn_first)
        self.ls2 = LayerScale(dim)
        self.norm3 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = FeedForward(dim, dim * 2)
        self.ls3 = LayerScale(dim)

    def forward(self, x):
        x = x + self.ls1(self.attn(self.norm1(x)))
        x = x + self.ls2(self.lpi(self.norm2(x)))
        return x + self.ls3(self.mlp(self.norm3(x)))


class XCiTNet(nn.Module):
    def __init__(self, bn_first=False, no_floor=False):
        super().__init__()
        self.stem = ConvStem(EMBED)
        self.pos_embed = FourierPosEmbed(no_floor=no_floor)
        self.layers = nn.ModuleList([XCiTLayer(EMBED, HEADS, bn_first) for _ in range(DEPTH)])
        self.norm = nn.LayerNorm(EMBED, eps=1e-6)
        self.head = nn.Linear(EMBED, N_CLASSES)

    def forward(self, x):
        x = self.stem(x).flatten(2).transpose(1, 2)
        x = x + self.pos_embed()
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x).mean(dim=1))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_xcit torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = XCiTNet(bn_first=bug == "torch_lpi_bn_before_act", no_floor=bug == "torch_fourier_no_floor")
    return m.eval()


def _images():
    return np.random.default_rng(43).standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
