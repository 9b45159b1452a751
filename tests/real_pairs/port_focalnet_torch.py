"""Hand-written port, torch side: a tiny FocalNet image classifier (written by "person B").

The same math as port_focalnet_paddle.py, re-implemented by hand in a timm-like, channels-first
style: input `images` [2, 3, 16, 16] (positional), output logits [2, 10].

  stem     : nn.Sequential(Conv2d(3, 16, 2, stride 2), LayerNorm2d(16))                (8 x 8)
  stages.0 : downsample = nn.Identity, 2 blocks of dim 16
  stages.1 : downsample = Downsample(Conv2d(16, 32, 2, stride 2), LayerNorm2d), 1 block  (4 x 4)
  norm     : LayerNorm2d(32), then mean over H, W (inline), head Linear(32, 10)

Torch idioms on this side:
- Everything stays NCHW: `LayerNorm2d` permutes to channels-last, F.layer_norm, permutes back.
- `FocalModulation`: SEPARATE 1x1 convs `to_q` (C -> C), `to_ctx` (C -> C), `to_gates`
  (C -> 3); `focal_convs` = ModuleList of depthwise Conv2d (no bias) sharing ONE nn.GELU module
  `act` (called once per level); the global context is its own nn.Sequential `global_ctx`
  (AdaptiveAvgPool2d(1), GELU); `h` and `proj` are 1x1 Conv2d. The modulator is divided by
  focal_level + 1 (normalize_modulator).
- `Mlp`: `fc1`, `act`, `fc2` as 1x1 Conv2d (timm use_conv style).
- `FocalNetBlock` registers norm1, modulation, ls1, norm2, mlp, ls2; `LayerScale2d` holds
  `gamma` [C] and multiplies by gamma.view(1, C, 1, 1).
- Stages are an nn.Sequential; each `FocalNetStage` holds its downsample at the START.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_ln2d_groupnorm -> LayerNorm2d.forward is written as F.group_norm(x, 1, ...), which
                          normalises each sample over (C, H, W) instead of over C per pixel
  torch_global_maxpool -> the global-context Sequential is built with nn.AdaptiveMaxPool2d(1)
                          instead of nn.AdaptiveAvgPool2d(1)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IN_CHANS, DIMS, DEPTHS = 3, (16, 32), (2, 1)
FOCAL_LEVEL, FOCAL_WINDOW, FOCAL_FACTOR = 2, 3, 2
MLP_RATIO, NUM_CLASSES = 4, 10
BATCH, IMG = 2, 16
OWN_BUGS = {"torch_ln2d_groupnorm", "torch_global_maxpool"}
OTHER_BUGS = {"paddle_layerscale_swapped", "paddle_mlp_gelu_tanh"}

_CFG = {"groupnorm": False, "maxpool": False}


class LayerNorm2d(nn.LayerNorm):
    def __init__(self, dim, eps=1e-5):
        super().__init__(dim, eps=eps)
        self.as_groupnorm = _CFG["groupnorm"]

    def forward(self, x):
        if self.as_groupnorm:
            return F.group_norm(x, 1, self.weight, self.bias, self.eps)
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class LayerScale2d(nn.Module):
    def __init__(self, dim, init_values=1e-4):
        super().__init__()
        self.gamma = nn.Parameter(init_values * torch.ones(dim))

    def forward(self, x):
        return x * self.gamma.view(1, -1, 1, 1)


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Conv2d(dim, hidden, 1)
        self.act = nn.GELU()
        self.fc2 = nn.Conv2d(hidden, dim, 1)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class FocalModulation(nn.Module):
    def __init__(self, dim, focal_level=FOCAL_LEVEL):
        super().__init__()
        self.focal_level = focal_level
        self.to_q = nn.Conv2d(dim, dim, 1)
        self.to_ctx = nn.Conv2d(dim, dim, 1)
        self.to_gates = nn.Conv2d(dim, focal_level + 1, 1)
        self.focal_convs = nn.ModuleList()
        for k in range(focal_level):
            ks = FOCAL_FACTOR * k + FOCAL_WINDOW
            self.focal_convs.append(nn.Conv2d(dim, dim, ks, padding=ks // 2, groups=dim, bias=False))
        self.act = nn.GELU()
        pool = nn.AdaptiveMaxPool2d(1) if _CFG["maxpool"] else nn.AdaptiveAvgPool2d(1)
        self.global_ctx = nn.Sequential(pool, nn.GELU())
        self.h = nn.Conv2d(dim, dim, 1)
        self.proj = nn.Conv2d(dim, dim, 1)

    def forward(self, x):  # [B, C, H, W]
        q, ctx, gates = self.to_q(x), self.to_ctx(x), self.to_gates(x)
        ctx_all = torch.zeros_like(ctx)
        for level, conv in enumerate(self.focal_convs):
            ctx = self.act(conv(ctx))
            ctx_all = ctx_all + ctx * gates[:, level:level + 1]
        ctx_all = ctx_all + self.global_ctx(ctx) * gates[:, self.focal_level:]
        ctx_all = ctx_all / (self.focal_level + 1)
        return self.proj(q * self.h(ctx_all))


class FocalNetBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm1 = LayerNorm2d(dim)
        self.modulation = FocalModulation(dim)
        self.ls1 = LayerScale2d(dim)
        self.norm2 = LayerNorm2d(dim)
        self.mlp = Mlp(dim, dim * MLP_RATIO)
        self.ls2 = LayerScale2d(dim)

    def forward(self, x):
        x = x + self.ls1(self.modulation(self.norm1(x)))
        x = x + self.ls2(self.mlp(self.norm2(x)))
        return x


class Downsample(nn.Module):
    def __init__(self, in_chs, out_chs):
        super().__init__()
        self.proj = nn.Conv2d(in_chs, out_chs, 2, stride=2)
        self.norm = LayerNorm2d(out_chs)

    def forward(self, x):
        return self.norm(self.proj(x))


class FocalNetStage(nn.Module):
    def __init__(self, in_dim, dim, depth):
        super().__init__()
        self.downsample = Downsample(in_dim, dim) if in_dim != dim else nn.Identity()
        self.blocks = nn.Sequential(*[FocalNetBlock(dim) for _ in range(depth)])

    def forward(self, x):
        return self.blocks(self.downsample(x))


class FocalNetClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(IN_CHANS, DIMS[0], 2, stride=2), LayerNorm2d(DIMS[0]))
        stages, prev = [], DIMS[0]
        for dim, depth in zip(DIMS, DEPTHS):
            stages.append(FocalNetStage(prev, dim, depth))
            prev = dim
        self.stages = nn.Sequential(*stages)
        self.norm = LayerNorm2d(DIMS[-1])
        self.head = nn.Linear(DIMS[-1], NUM_CLASSES)

    def forward(self, images):
        x = self.stages(self.stem(images))
        x = self.norm(x).mean(dim=(2, 3))
        return self.head(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_focalnet torch: unknown PADIFF_BUG {bug!r}")
    _CFG["groupnorm"] = bug == "torch_ln2d_groupnorm"
    _CFG["maxpool"] = bug == "torch_global_maxpool"
    torch.manual_seed(0)
    m = FocalNetClassifier()
    return m.eval()


def _images():
    rng = np.random.default_rng(37)
    return rng.standard_normal((BATCH, IN_CHANS, IMG, IMG)).astype("float32")


def inputs():
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()
