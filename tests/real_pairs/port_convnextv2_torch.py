"""Hand-written port, torch side: a tiny ConvNeXt-V2 image classifier (written by "person B").

The same math as port_convnextv2_paddle.py, re-implemented by hand in the layout of the official
facebookresearch/ConvNeXt-V2 code: input [2, 3, 32, 32] (positional, NCHW), dims (16, 32),
depths (2, 2), output logits [2, 10].

Torch idioms on this side (channels-LAST inside every block and every norm):
- root `ConvNeXtV2`:
  - `stem` (`PatchStem`): registers `proj` Conv2d(3, 16, 4, stride=4) and `norm`
    nn.LayerNorm(16, eps=1e-6); forward: proj -> permute to NHWC -> norm -> permute back.
  - `stages` nn.ModuleList of two nn.Sequential of `Block`, and ONE `downsample` (`Downsample`)
    called between them by the root loop. `Downsample` registers `conv` Conv2d(16, 32, 2, 2)
    BEFORE `norm` nn.LayerNorm(16, eps=1e-6), but calls norm (on a permuted NHWC view) first.
  - `norm` nn.LayerNorm(32, eps=1e-6) on the pooled features (x.mean([-2, -1]) inline, no pool
    module), then `head` nn.Linear(32, 10).
- `Block` (official layout): `dwconv` Conv2d(C, C, 7, padding=3, groups=C) on NCHW, then
  permute(0, 2, 3, 1), `norm` nn.LayerNorm(C, eps=1e-6), `pwconv1` nn.Linear(C, 4C), `act`
  nn.GELU(), `grn` (GRN module), `pwconv2` nn.Linear(4C, C), permute back, `drop_path`
  nn.Identity (stochastic depth off), residual add.
- `GRN`: parameters `gamma` / `beta` of shape [1, 1, 1, 4C]; Gx = torch.norm(x, p=2,
  dim=(1, 2), keepdim=True), Nx = Gx / (Gx.mean(dim=-1, keepdim=True) + 1e-6),
  out = gamma * (x * Nx) + beta + x.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_gelu_tanh        -> every Block builds its activation as nn.GELU(approximate="tanh")
                            instead of the exact erf GELU (a precision-level difference)
  torch_stem_permute_hw  -> PatchStem permutes back with permute(0, 3, 2, 1) instead of
                            permute(0, 3, 1, 2): the NCHW map leaves the stem with H and W swapped
"""
import os

import numpy as np
import torch
from torch import nn

IN_CHANS, DIMS, DEPTHS, NUM_CLASSES = 3, [16, 32], [2, 2], 10
BATCH, IMG = 2, 32
OWN_BUGS = {"torch_gelu_tanh", "torch_stem_permute_hw"}
OTHER_BUGS = {"paddle_ln_unbiased_var", "paddle_grn_batch_mean"}


class GRN(nn.Module):
    """GRN (Global Response Normalization) layer, channels-last input [N, H, W, C]."""

    def __init__(self, dim):
        super().__init__()
        self.gamma = nn.Parameter(torch.zeros(1, 1, 1, dim))
        self.beta = nn.Parameter(torch.zeros(1, 1, 1, dim))

    def forward(self, x):
        Gx = torch.norm(x, p=2, dim=(1, 2), keepdim=True)
        Nx = Gx / (Gx.mean(dim=-1, keepdim=True) + 1e-6)
        return self.gamma * (x * Nx) + self.beta + x


class Block(nn.Module):
    def __init__(self, dim, gelu_tanh=False):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU(approximate="tanh") if gelu_tanh else nn.GELU()
        self.grn = GRN(4 * dim)
        self.pwconv2 = nn.Linear(4 * dim, dim)
        self.drop_path = nn.Identity()

    def forward(self, x):
        inp = x
        x = self.dwconv(x)
        x = x.permute(0, 2, 3, 1)  # (N, C, H, W) -> (N, H, W, C)
        x = self.norm(x)
        x = self.pwconv1(x)
        x = self.act(x)
        x = self.grn(x)
        x = self.pwconv2(x)
        x = x.permute(0, 3, 1, 2)  # (N, H, W, C) -> (N, C, H, W)
        return inp + self.drop_path(x)


class PatchStem(nn.Module):
    def __init__(self, in_chans, dim, swap_hw=False):
        super().__init__()
        self.proj = nn.Conv2d(in_chans, dim, kernel_size=4, stride=4)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.swap_hw = swap_hw

    def forward(self, x):
        x = self.proj(x).permute(0, 2, 3, 1)
        x = self.norm(x)
        if self.swap_hw:
            return x.permute(0, 3, 2, 1).contiguous()
        return x.permute(0, 3, 1, 2).contiguous()


class Downsample(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, kernel_size=2, stride=2)
        self.norm = nn.LayerNorm(cin, eps=1e-6)

    def forward(self, x):
        x = self.norm(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        return self.conv(x)


class ConvNeXtV2(nn.Module):
    def __init__(self, gelu_tanh=False, swap_hw=False):
        super().__init__()
        self.stem = PatchStem(IN_CHANS, DIMS[0], swap_hw=swap_hw)
        self.stages = nn.ModuleList(
            [nn.Sequential(*[Block(DIMS[i], gelu_tanh) for _ in range(DEPTHS[i])]) for i in range(2)]
        )
        self.downsample = Downsample(DIMS[0], DIMS[1])
        self.norm = nn.LayerNorm(DIMS[-1], eps=1e-6)
        self.head = nn.Linear(DIMS[-1], NUM_CLASSES)

    def forward_features(self, x):
        x = self.stem(x)
        for i, stage in enumerate(self.stages):
            if i > 0:
                x = self.downsample(x)
            x = stage(x)
        return self.norm(x.mean([-2, -1]))  # global average pooling, (N, C, H, W) -> (N, C)

    def forward(self, x):
        return self.head(self.forward_features(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_convnextv2 torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = ConvNeXtV2(gelu_tanh=bug == "torch_gelu_tanh", swap_hw=bug == "torch_stem_permute_hw")
    return m.eval()


def _images():
    rng = np.random.default_rng(31)
    return rng.standard_normal((BATCH, IN_CHANS, IMG, IMG)).astype("float32")


def inputs():
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
