"""Hand-written port, torch side: a tiny two-stage Pyramid Vision Transformer (written by "person B").

The same math as port_pvt_paddle.py, re-implemented by hand: input x [2, 3, 64, 64]
(positional), output logits [2, 10]. Two stages (16 ch / 1 head / spatial reduction 4 on a
16x16 grid, then 32 ch / 2 heads / reduction 2 on an 8x8 grid), 2 pre-norm blocks each,
overlapping patch embeddings (7x7 stride 4, then 3x3 stride 2), a learned position embedding
per stage, a LayerNorm after each stage; global mean of the last grid -> Linear(32, 10).

Torch idioms on this side:
- root `PVT`: `stages` = nn.ModuleList of two `PVTStage` (grid in, grid out), then `head`
  nn.Linear; the global mean is inline in the root forward.
- `PVTStage` registers `patch_embed` (PatchEmbed: `conv` nn.Conv2d + `ln` nn.LayerNorm, returns
  the tokens and (H, W)), then `pos_embed`, a parameter in GRID layout [1, C, H, W] that the
  forward flattens to tokens before adding, then `blocks` (nn.ModuleList) and `norm`.
- `SRAttention` registers `sr` (nn.Conv2d, kernel = stride = sr), `sr_norm` (nn.LayerNorm),
  then `mha` = nn.MultiheadAttention(C, heads, batch_first=True): q / k / v are ONE packed
  `in_proj_weight` [3C, C] / `in_proj_bias` [3C] (rows q | k | v), and the output projection is
  `mha.out_proj` (used functionally inside nn.MultiheadAttention, never called as a module).
- `PVTBlock`: `norm1`, `attn`, `norm2`, `mlp` = nn.Sequential(Linear, nn.GELU(), Linear).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_sr_grid_no_transpose -> SRAttention turns the tokens [B, N, C] back into the grid with
                                x.reshape(B, C, H, W), forgetting the transpose(1, 2), before
                                the reduction conv
  torch_residual_from_norm   -> PVTBlock overwrites x with norm1(x) before the attention, so the
                                attention residual adds to the NORMALISED tokens
"""
import os

import numpy as np
import torch
from torch import nn

NUM_CLASSES = 10
BATCH = 2
IMG_SIZE = 64
OWN_BUGS = {"torch_sr_grid_no_transpose", "torch_residual_from_norm"}
OTHER_BUGS = {"paddle_kv_heads_first", "paddle_gelu_tanh"}


class PatchEmbed(nn.Module):
    def __init__(self, in_chs, embed_dim, patch_size, stride):
        super().__init__()
        self.conv = nn.Conv2d(in_chs, embed_dim, patch_size, stride=stride, padding=patch_size // 2)
        self.ln = nn.LayerNorm(embed_dim)

    def forward(self, x):
        x = self.conv(x)
        hw = x.shape[-2:]
        x = x.flatten(2).transpose(1, 2)
        return self.ln(x), hw


class SRAttention(nn.Module):
    def __init__(self, dim, num_heads, sr_ratio, grid_bug=False):
        super().__init__()
        self.grid_bug = grid_bug
        self.sr = nn.Conv2d(dim, dim, kernel_size=sr_ratio, stride=sr_ratio)
        self.sr_norm = nn.LayerNorm(dim)
        self.mha = nn.MultiheadAttention(dim, num_heads, batch_first=True)

    def forward(self, x, hw):
        B, _, C = x.shape
        H, W = hw
        if self.grid_bug:
            grid = x.reshape(B, C, H, W)
        else:
            grid = x.transpose(1, 2).reshape(B, C, H, W)
        kv = self.sr(grid).flatten(2).transpose(1, 2)
        kv = self.sr_norm(kv)
        out, _ = self.mha(x, kv, kv, need_weights=False)
        return out


class PVTBlock(nn.Module):
    def __init__(self, dim, num_heads, sr_ratio, mlp_ratio=2, grid_bug=False, residual_bug=False):
        super().__init__()
        self.residual_bug = residual_bug
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = SRAttention(dim, num_heads, sr_ratio, grid_bug=grid_bug)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * mlp_ratio), nn.GELU(), nn.Linear(dim * mlp_ratio, dim))

    def forward(self, x, hw):
        if self.residual_bug:
            x = self.norm1(x)
            x = x + self.attn(x, hw)
        else:
            x = x + self.attn(self.norm1(x), hw)
        return x + self.mlp(self.norm2(x))


class PVTStage(nn.Module):
    def __init__(self, in_chs, dim, patch_size, stride, grid, depth, num_heads, sr_ratio, **block_kw):
        super().__init__()
        self.patch_embed = PatchEmbed(in_chs, dim, patch_size, stride)
        self.pos_embed = nn.Parameter(torch.zeros(1, dim, grid, grid))
        self.blocks = nn.ModuleList([PVTBlock(dim, num_heads, sr_ratio, **block_kw) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim, eps=1e-6)

    def forward(self, x):
        x, hw = self.patch_embed(x)
        x = x + self.pos_embed.flatten(2).transpose(1, 2)
        for blk in self.blocks:
            x = blk(x, hw)
        x = self.norm(x)
        return x.transpose(1, 2).reshape(x.shape[0], -1, *hw)


class PVT(nn.Module):
    def __init__(self, dims=(16, 32), heads=(1, 2), sr_ratios=(4, 2), depths=(2, 2), num_classes=NUM_CLASSES,
                 **block_kw):
        super().__init__()
        self.stages = nn.ModuleList([
            PVTStage(3, dims[0], 7, 4, IMG_SIZE // 4, depths[0], heads[0], sr_ratios[0], **block_kw),
            PVTStage(dims[0], dims[1], 3, 2, IMG_SIZE // 8, depths[1], heads[1], sr_ratios[1], **block_kw),
        ])
        self.head = nn.Linear(dims[1], num_classes)

    def forward(self, x):
        for stage in self.stages:
            x = stage(x)
        return self.head(x.flatten(2).mean(-1))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_pvt torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = PVT(grid_bug=bug == "torch_sr_grid_no_transpose", residual_bug=bug == "torch_residual_from_norm")
    return m.eval()


def _image():
    rng = np.random.default_rng(41)
    return rng.standard_normal((BATCH, 3, IMG_SIZE, IMG_SIZE)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
