"""Hand-written port, torch side: a tiny CSWin-Transformer classifier (written by "person B").

The same math as port_cswin_paddle.py, re-implemented by hand from the paper: image
[2, 3, 32, 32] (positional) -> logits [2, 10]. Conv embed 7x7 / 4 (3 -> 16) + LayerNorm; stage 1
= 2 cross-shaped-window blocks (dim 16, 4 heads, stripe width 2, 8x8); stage 2 = a stride-2 3x3
merge conv (16 -> 32) + LayerNorm, then 1 block (dim 32, 4 heads, stripe width 2, 4x4); final
LayerNorm, mean over all positions, Linear(32 -> 10). In a block: x += proj(cross-shaped attention
(norm1(x))), x += mlp(norm2(x)); LePE = 3x3 depthwise conv on each stripe's own v map.

Torch idioms on this side:
- tokens are kept CHANNELS-LAST [B, H, W, C] from the embed to the pool (mean over dims 1, 2).
- root `CSWin`: `patch_embed` nn.Conv2d and `embed_norm` nn.LayerNorm directly on the root,
  `stages` (ModuleList of two `CSWinStage`), `norm`, `head`.
- `CSWinStage` registers `blocks` (ModuleList) first and then `downsample` (PatchMerging:
  `reduction` Conv2d, `norm` LayerNorm; None in stage 0) but calls `downsample` first: the merge
  conv lives inside stage 2.
- `CSWinBlock`: `norm1`, `attn` (CrossShapedWindowAttention), `norm2`, `mlp` = nn.Sequential(
  Linear, nn.GELU, Linear).
- `CrossShapedWindowAttention` registers SEPARATE `to_q`, `to_k`, `to_v` Linears, then `lepe_h`,
  `lepe_v` (depthwise Conv2d, C/2 channels each) and `proj`. The HORIZONTAL stripes take the
  FIRST half of the channels (heads 0, 1) and the VERTICAL stripes the second half (heads 2, 3):
  the opposite of the paddle side's branch order. The stripes are cut inline by a helper method
  (`_stripe_attention`) straight from [B, H, W, C]: horizontal = view(B, H/s, s, W, C), vertical
  = view(B, H, W/s, s, C).permute(0, 2, 1, 3, 4); attention is F.scaled_dot_product_attention, and
  LePE is added after the heads are merged back.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_merge_reshape          -> PatchMerging turns [B, H, W, C] into the conv's NCHW with
                                  x.reshape(B, C, H, W) instead of x.permute(0, 3, 1, 2)
  torch_branch_concat_swapped  -> the attention concatenates the branch outputs as
                                  [vertical | horizontal] before proj, the reverse of its own
                                  channel split
"""

import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IMAGE_SIZE, CHANNELS, N_CLASSES = 32, 3, 10
WIDTH = 16
BLOCKS_PER_STAGE = (2, 1)
NUM_HEADS = (4, 4)
STRIPE = 2
HIDDEN_MULT = 2
BATCH = 2
OWN_BUGS = {"torch_merge_reshape", "torch_branch_concat_swapped"}
OTHER_BUGS = {"paddle_lepe_full_image", "paddle_gelu_tanh"}


class CrossShapedWindowAttention(nn.Module):
    def __init__(self, dim, num_heads, stripe, concat_swapped=False):
        super().__init__()
        self.num_heads, self.stripe, self.concat_swapped = num_heads, stripe, concat_swapped
        self.head_dim = dim // num_heads
        half = dim // 2
        self.to_q = nn.Linear(dim, dim)
        self.to_k = nn.Linear(dim, dim)
        self.to_v = nn.Linear(dim, dim)
        self.lepe_h = nn.Conv2d(half, half, 3, padding=1, groups=half)
        self.lepe_v = nn.Conv2d(half, half, 3, padding=1, groups=half)
        self.proj = nn.Linear(dim, dim)

    def _stripe_attention(self, q, k, v, lepe_conv, horizontal):
        B, H, W, C = q.shape
        s = self.stripe
        if horizontal:

            def cut(t):
                return t.reshape(B, H // s, s, W, C).reshape(B * (H // s), s, W, C)

        else:

            def cut(t):
                return t.reshape(B, H, W // s, s, C).permute(0, 2, 1, 3, 4).reshape(B * (W // s), H, s, C)

        qs, ks, vs = cut(q), cut(k), cut(v)
        nb, hh, ww, _ = vs.shape
        lepe = lepe_conv(vs.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)
        nh = self.num_heads // 2

        def heads(t):
            return t.reshape(nb, hh * ww, nh, self.head_dim).transpose(1, 2)

        out = F.scaled_dot_product_attention(heads(qs), heads(ks), heads(vs))
        out = out.transpose(1, 2).reshape(nb, hh, ww, C) + lepe
        if horizontal:
            return out.reshape(B, H, W, C)
        return out.reshape(B, W // s, H, s, C).permute(0, 2, 1, 3, 4).reshape(B, H, W, C)

    def forward(self, x):
        C = x.shape[-1]
        half = C // 2
        q, k, v = self.to_q(x), self.to_k(x), self.to_v(x)
        out_h = self._stripe_attention(q[..., :half], k[..., :half], v[..., :half], self.lepe_h, True)
        out_v = self._stripe_attention(q[..., half:], k[..., half:], v[..., half:], self.lepe_v, False)
        if self.concat_swapped:
            out = torch.cat([out_v, out_h], dim=-1)
        else:
            out = torch.cat([out_h, out_v], dim=-1)
        return self.proj(out)


class CSWinBlock(nn.Module):
    def __init__(self, dim, num_heads, concat_swapped=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = CrossShapedWindowAttention(dim, num_heads, STRIPE, concat_swapped)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * HIDDEN_MULT), nn.GELU(), nn.Linear(dim * HIDDEN_MULT, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class PatchMerging(nn.Module):
    def __init__(self, dim, dim_out, reshape_bug=False):
        super().__init__()
        self.reshape_bug = reshape_bug
        self.reduction = nn.Conv2d(dim, dim_out, kernel_size=3, stride=2, padding=1)
        self.norm = nn.LayerNorm(dim_out)

    def forward(self, x):
        B, H, W, C = x.shape
        if self.reshape_bug:
            x = x.reshape(B, C, H, W)
        else:
            x = x.permute(0, 3, 1, 2)
        x = self.reduction(x).permute(0, 2, 3, 1)
        return self.norm(x)


class CSWinStage(nn.Module):
    def __init__(self, dim, depth, num_heads, in_dim=None, bug=""):
        super().__init__()
        self.blocks = nn.ModuleList([CSWinBlock(dim, num_heads, concat_swapped=bug == "torch_branch_concat_swapped") for _ in range(depth)])
        self.downsample = PatchMerging(in_dim, dim, reshape_bug=bug == "torch_merge_reshape") if in_dim is not None else None

    def forward(self, x):
        if self.downsample is not None:
            x = self.downsample(x)
        for blk in self.blocks:
            x = blk(x)
        return x


class CSWin(nn.Module):
    def __init__(self, bug=""):
        super().__init__()
        self.patch_embed = nn.Conv2d(CHANNELS, WIDTH, kernel_size=7, stride=4, padding=2)
        self.embed_norm = nn.LayerNorm(WIDTH)
        self.stages = nn.ModuleList(
            [
                CSWinStage(WIDTH, BLOCKS_PER_STAGE[0], NUM_HEADS[0], bug=bug),
                CSWinStage(2 * WIDTH, BLOCKS_PER_STAGE[1], NUM_HEADS[1], in_dim=WIDTH, bug=bug),
            ]
        )
        self.norm = nn.LayerNorm(2 * WIDTH)
        self.head = nn.Linear(2 * WIDTH, N_CLASSES)

    def forward(self, img):
        x = self.embed_norm(self.patch_embed(img).permute(0, 2, 3, 1))
        for stage in self.stages:
            x = stage(x)
        x = self.norm(x)
        return self.head(x.mean(dim=(1, 2)))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_cswin torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = CSWin(bug if bug in OWN_BUGS else "")
    return m.eval()


def _image():
    rng = np.random.default_rng(54)
    return rng.standard_normal((BATCH, CHANNELS, IMAGE_SIZE, IMAGE_SIZE)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
