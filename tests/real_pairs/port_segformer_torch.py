"""Hand-written port, torch side: a tiny SegFormer (MiT encoder + all-MLP decoder), written by
"person B" the way a PyTorch user would write it. Same math as port_segformer_paddle.py: input
[1, 3, 32, 32], 2 stages (dims 32 / 64, heads 1 / 2, sr_ratio 2 / 1, depths 2 / 1, Mix-FFN x4),
decoder width 32, 5 classes, logits [1, 5, 8, 8].

Torch idioms on this side: the encoder keeps TOKENS [B, N, C] everywhere and carries (H, W)
along. A stage is `stages.i` (`MiTStage`: `patch_embed`, `blocks` ModuleList, `norm`); the tokens
are turned back into an NCHW map only where a conv needs one: at the START of stage 2 (before its
patch embed), inside the sr branch of the attention, inside the `DWConv` wrapper of the Mix-FFN,
and in the decoder after each per-stage `MLP` (an nn.Linear on tokens, weight [32, C]).
- `PatchEmbed`: `proj` Conv2d + `norm` LayerNorm, returns (tokens, H, W).
- `EfficientSelfAttention`: `sr` Conv2d + `sr_norm` (registered first) and the built-in
  `attn` = nn.MultiheadAttention(C, heads, batch_first=True) with one packed in_proj_weight
  [3C, C] (q | k | v); query = tokens, key = value = reduced tokens (or the tokens when sr = 1).
- `MixFFN`: `fc1`, `dwconv` (`DWConv`: reshape to NCHW, `dw` 3x3 depthwise Conv2d, flatten back),
  `act` nn.GELU, `fc2`.
- `MiTBlock` registers `mlp`, `norm2` before `attn`, `norm1` (called norm1, attn, norm2, mlp).
- `AllMLPDecoder`: `mlps` (ModuleList, stage order c1, c2), `up` = nn.Upsample(scale_factor=2,
  bilinear, align_corners=False) for c2, concat [c2, c1], `fuse` = nn.Sequential(Conv2d 1x1 no
  bias, BatchNorm2d, ReLU), `cls` Conv2d 1x1.

Planted bugs (PADIFF_BUG), see port_segformer_truth.json; the paddle side's bug name is accepted
and ignored, any other name raises ValueError:
  torch_upsample_nearest    -> the decoder's nn.Upsample uses mode="nearest" instead of bilinear
  torch_dwconv_no_transpose -> DWConv turns the tokens [B, N, C] into a map with
                               x.reshape(B, C, H, W) (no transpose first): the channel and the
                               spatial axes are scrambled before the depthwise conv
"""
import os

import numpy as np
import torch
from torch import nn

IMG, DIMS, HEADS, SR, DEPTHS, MLP_RATIO, EMBED, CLASSES = 32, (32, 64), (1, 2), (2, 1), (2, 1), 4, 32, 5

OWN_BUGS = {"torch_upsample_nearest", "torch_dwconv_no_transpose"}
OTHER_BUGS = {"paddle_sr_stride1"}


class PatchEmbed(nn.Module):
    def __init__(self, in_chans, dim, patch, stride):
        super().__init__()
        self.proj = nn.Conv2d(in_chans, dim, patch, stride, patch // 2)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        x = self.proj(x)
        _, _, h, w = x.shape
        return self.norm(x.flatten(2).transpose(1, 2)), h, w


class EfficientSelfAttention(nn.Module):
    def __init__(self, dim, heads, sr_ratio):
        super().__init__()
        self.sr_ratio = sr_ratio
        if sr_ratio > 1:
            self.sr = nn.Conv2d(dim, dim, kernel_size=sr_ratio, stride=sr_ratio)
            self.sr_norm = nn.LayerNorm(dim, eps=1e-6)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)

    def forward(self, x, h, w):
        kv = x
        if self.sr_ratio > 1:
            b, _, c = x.shape
            kv = self.sr(x.transpose(1, 2).reshape(b, c, h, w))
            kv = self.sr_norm(kv.flatten(2).transpose(1, 2))
        out, _ = self.attn(x, kv, kv, need_weights=False)
        return out


class DWConv(nn.Module):
    def __init__(self, dim, no_transpose=False):
        super().__init__()
        self.no_transpose = no_transpose
        self.dw = nn.Conv2d(dim, dim, 3, 1, 1, groups=dim)

    def forward(self, x, h, w):
        b, _, c = x.shape
        if self.no_transpose:
            x = x.reshape(b, c, h, w)
        else:
            x = x.transpose(1, 2).reshape(b, c, h, w)
        return self.dw(x).flatten(2).transpose(1, 2)


class MixFFN(nn.Module):
    def __init__(self, dim, hidden, no_transpose=False):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.dwconv = DWConv(hidden, no_transpose)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x, h, w):
        return self.fc2(self.act(self.dwconv(self.fc1(x), h, w)))


class MiTBlock(nn.Module):
    def __init__(self, dim, heads, sr_ratio, no_transpose=False):
        super().__init__()
        self.mlp = MixFFN(dim, dim * MLP_RATIO, no_transpose)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = EfficientSelfAttention(dim, heads, sr_ratio)
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)

    def forward(self, x, h, w):
        x = x + self.attn(self.norm1(x), h, w)
        return x + self.mlp(self.norm2(x), h, w)


class MiTStage(nn.Module):
    def __init__(self, in_chans, dim, patch, stride, heads, sr_ratio, depth, no_transpose=False):
        super().__init__()
        self.patch_embed = PatchEmbed(in_chans, dim, patch, stride)
        self.blocks = nn.ModuleList([MiTBlock(dim, heads, sr_ratio, no_transpose) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim, eps=1e-6)

    def forward(self, x):
        x, h, w = self.patch_embed(x)
        for blk in self.blocks:
            x = blk(x, h, w)
        return self.norm(x), h, w


class MLP(nn.Module):
    def __init__(self, in_dim, dim):
        super().__init__()
        self.proj = nn.Linear(in_dim, dim)

    def forward(self, x):
        return self.proj(x)


class AllMLPDecoder(nn.Module):
    def __init__(self, in_dims=DIMS, dim=EMBED, num_classes=CLASSES, up_mode="bilinear"):
        super().__init__()
        self.mlps = nn.ModuleList([MLP(d, dim) for d in in_dims])
        if up_mode == "nearest":
            self.up = nn.Upsample(scale_factor=2, mode="nearest")
        else:
            self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.fuse = nn.Sequential(nn.Conv2d(2 * dim, dim, 1, bias=False), nn.BatchNorm2d(dim), nn.ReLU())
        self.cls = nn.Conv2d(dim, num_classes, 1)

    def forward(self, feats):
        maps = []
        for (tokens, h, w), mlp in zip(feats, self.mlps):
            t = mlp(tokens)
            maps.append(t.transpose(1, 2).reshape(t.shape[0], -1, h, w))
        c1, c2 = maps
        x = self.fuse(torch.cat([self.up(c2), c1], dim=1))
        return self.cls(x)


class Segformer(nn.Module):
    def __init__(self, up_mode="bilinear", no_transpose=False):
        super().__init__()
        self.stages = nn.ModuleList([
            MiTStage(3, DIMS[0], 7, 4, HEADS[0], SR[0], DEPTHS[0], no_transpose),
            MiTStage(DIMS[0], DIMS[1], 3, 2, HEADS[1], SR[1], DEPTHS[1], no_transpose),
        ])
        self.decoder = AllMLPDecoder(up_mode=up_mode)

    def forward(self, pixel_values):
        feats = []
        x = pixel_values
        for i, stage in enumerate(self.stages):
            if i > 0:  # tokens of the previous stage back to a map for the next patch embed
                tokens, h, w = feats[-1]
                x = tokens.transpose(1, 2).reshape(tokens.shape[0], -1, h, w)
            feats.append(stage(x))
        return self.decoder(feats)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_segformer torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = Segformer(up_mode="nearest" if bug == "torch_upsample_nearest" else "bilinear",
                  no_transpose=bug == "torch_dwconv_no_transpose")
    return m.eval()


def _image():
    return np.random.default_rng(3).standard_normal((1, 3, IMG, IMG)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # logits [1, 5, 8, 8]
    return (output**2).mean()
