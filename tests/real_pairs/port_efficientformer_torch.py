"""Hand-written port, torch side: a tiny EfficientFormer (v1) image classifier (written by "person B").

The same math as port_efficientformer_paddle.py, re-implemented by hand in a timm-like layout:
input image [1, 3, 32, 32] (positional), stem (two conv3x3 s2 + BN + ReLU) to [1, 16, 8, 8],
stage 1 = two 4D blocks (pool mixer pool(x) - x, conv MLP with BN, layer scales), stage 2 =
downsample (conv3x3 s2 + BN) to [1, 32, 4, 4], one 4D block, flatten to 16 tokens, one 3D block
(LN + 4-head attention, LN + MLP, layer scales); final LayerNorm, token mean, and the average of
`head` and `head_dist`: logits [1, 10]. BN / LN eps 1e-5, exact GELU.

Torch idioms on this side:
- root `EfficientFormerT`: `stem` (`Stem4`: `conv1`, `norm1`, `act1`, `conv2`, `norm2`, `act2`),
  `stages` (ModuleList of two `EfficientFormerStage`), `norm`, `head`, `head_dist`.
- `EfficientFormerStage`: `downsample` (nn.Identity in stage 0, a `Downsample` with `conv` /
  `norm` in stage 1), `blocks_4d` (nn.Sequential of `MetaBlock2d`), `blocks_3d` (nn.Sequential
  of `MetaBlock1d`, empty in stage 0 and then not called). The flatten to tokens is INLINE in the
  stage forward, only when the stage has 3D blocks, as permute(0, 2, 3, 1).reshape(b, h * w, c)
  (the same token order as flatten(2).transpose(1, 2); see the notes on why not that one).
- `MetaBlock2d` registers `mlp` (nn.Sequential: 0 Conv2d 1x1, 1 BatchNorm2d, 2 GELU, 3 Conv2d 1x1,
  4 BatchNorm2d), `ls2`, `pool` (nn.AvgPool2d(3, 1, 1, count_include_pad=False)), `ls1`; the
  token mixer pool(x) - x is INLINE in the block forward. `LayerScale2d` keeps its `gamma` as a
  [C, 1, 1] parameter.
- `MetaBlock1d`: `norm1`, `token_mixer` (`Attention` with SEPARATE `q`, `k`, `v` Linears and
  `proj`), `ls1` (`LayerScale`, gamma [C]), `norm2`, `mlp` (`ConvMlp1d`: `fc1` / `fc2` are
  nn.Conv1d(kernel 1) on the [B, C, N] transpose, `act` nn.GELU), `ls2`.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_pool_count_pad     -> the block's nn.AvgPool2d is built without count_include_pad=False
                              (torch's default True), so border averages divide by 9 instead of
                              the 6 / 4 real cells
  torch_softmax_query_axis -> the attention applies softmax over dim=-2 (the query axis) instead
                              of dim=-1 (the keys)
"""
import os

import numpy as np
import torch
from torch import nn

IN_CHANS, STEM_MID, EMBED_DIMS, DEPTHS, NUM_VIT = 3, 8, (16, 32), (2, 1), 1
NUM_HEADS, MLP_RATIO, NUM_CLASSES = 4, 4, 10
EPS = 1e-5
IMG, BATCH = 32, 1
OWN_BUGS = {"torch_pool_count_pad", "torch_softmax_query_axis"}
OTHER_BUGS = {"paddle_pool_no_subtract", "paddle_downsample_bn_eps"}


class Stem4(nn.Module):
    def __init__(self, in_chs, out_chs):
        super().__init__()
        self.conv1 = nn.Conv2d(in_chs, out_chs // 2, kernel_size=3, stride=2, padding=1)
        self.norm1 = nn.BatchNorm2d(out_chs // 2, eps=EPS)
        self.act1 = nn.ReLU()
        self.conv2 = nn.Conv2d(out_chs // 2, out_chs, kernel_size=3, stride=2, padding=1)
        self.norm2 = nn.BatchNorm2d(out_chs, eps=EPS)
        self.act2 = nn.ReLU()

    def forward(self, x):
        x = self.act1(self.norm1(self.conv1(x)))
        return self.act2(self.norm2(self.conv2(x)))


class Downsample(nn.Module):
    def __init__(self, in_chs, out_chs):
        super().__init__()
        self.conv = nn.Conv2d(in_chs, out_chs, kernel_size=3, stride=2, padding=1)
        self.norm = nn.BatchNorm2d(out_chs, eps=EPS)

    def forward(self, x):
        return self.norm(self.conv(x))


class LayerScale2d(nn.Module):
    def __init__(self, dim, init_values=1e-5):
        super().__init__()
        self.gamma = nn.Parameter(init_values * torch.ones(dim, 1, 1))

    def forward(self, x):
        return x * self.gamma


class LayerScale(nn.Module):
    def __init__(self, dim, init_values=1e-5):
        super().__init__()
        self.gamma = nn.Parameter(init_values * torch.ones(dim))

    def forward(self, x):
        return x * self.gamma


class MetaBlock2d(nn.Module):
    def __init__(self, dim, count_pad=False):
        super().__init__()
        hidden = dim * MLP_RATIO
        self.mlp = nn.Sequential(
            nn.Conv2d(dim, hidden, 1),
            nn.BatchNorm2d(hidden, eps=EPS),
            nn.GELU(),
            nn.Conv2d(hidden, dim, 1),
            nn.BatchNorm2d(dim, eps=EPS),
        )
        self.ls2 = LayerScale2d(dim)
        if count_pad:
            self.pool = nn.AvgPool2d(3, stride=1, padding=1)
        else:
            self.pool = nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)
        self.ls1 = LayerScale2d(dim)

    def forward(self, x):
        x = x + self.ls1(self.pool(x) - x)
        x = x + self.ls2(self.mlp(x))
        return x


class Attention(nn.Module):
    def __init__(self, dim, num_heads, softmax_dim=-1):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.softmax_dim = softmax_dim
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        q = self.q(x).view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.k(x).view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.v(x).view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
        attn = (q @ k.transpose(-2, -1)) / (self.head_dim**0.5)
        attn = attn.softmax(dim=self.softmax_dim)
        x = (attn @ v).transpose(1, 2).reshape(b, n, c)
        return self.proj(x)


class ConvMlp1d(nn.Module):
    """Token MLP as 1x1 convolutions over [B, C, N]; takes and returns [B, N, C]."""

    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Conv1d(dim, hidden, kernel_size=1)
        self.act = nn.GELU()
        self.fc2 = nn.Conv1d(hidden, dim, kernel_size=1)

    def forward(self, x):
        x = x.transpose(1, 2)
        x = self.fc2(self.act(self.fc1(x)))
        return x.transpose(1, 2)


class MetaBlock1d(nn.Module):
    def __init__(self, dim, softmax_dim=-1):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=EPS)
        self.token_mixer = Attention(dim, NUM_HEADS, softmax_dim)
        self.ls1 = LayerScale(dim)
        self.norm2 = nn.LayerNorm(dim, eps=EPS)
        self.mlp = ConvMlp1d(dim, dim * MLP_RATIO)
        self.ls2 = LayerScale(dim)

    def forward(self, x):
        x = x + self.ls1(self.token_mixer(self.norm1(x)))
        x = x + self.ls2(self.mlp(self.norm2(x)))
        return x


class EfficientFormerStage(nn.Module):
    def __init__(self, in_dim, dim, depth, num_vit, downsample, count_pad=False, softmax_dim=-1):
        super().__init__()
        self.downsample = Downsample(in_dim, dim) if downsample else nn.Identity()
        self.blocks_4d = nn.Sequential(*[MetaBlock2d(dim, count_pad) for _ in range(depth)])
        self.blocks_3d = nn.Sequential(*[MetaBlock1d(dim, softmax_dim) for _ in range(num_vit)])

    def forward(self, x):
        x = self.downsample(x)
        x = self.blocks_4d(x)
        if len(self.blocks_3d):
            b, c, h, w = x.shape
            x = x.permute(0, 2, 3, 1).reshape(b, h * w, c)  # NHWC tokens, row-major over (h, w)
            x = self.blocks_3d(x)
        return x


class EfficientFormerT(nn.Module):
    def __init__(self, count_pad=False, softmax_dim=-1):
        super().__init__()
        self.stem = Stem4(IN_CHANS, EMBED_DIMS[0])
        self.stages = nn.ModuleList([
            EfficientFormerStage(EMBED_DIMS[0], EMBED_DIMS[0], DEPTHS[0], 0, False, count_pad, softmax_dim),
            EfficientFormerStage(EMBED_DIMS[0], EMBED_DIMS[1], DEPTHS[1], NUM_VIT, True, count_pad, softmax_dim),
        ])
        self.norm = nn.LayerNorm(EMBED_DIMS[1], eps=EPS)
        self.head = nn.Linear(EMBED_DIMS[1], NUM_CLASSES)
        self.head_dist = nn.Linear(EMBED_DIMS[1], NUM_CLASSES)

    def forward(self, x):
        x = self.stem(x)
        for stage in self.stages:
            x = stage(x)
        x = self.norm(x).mean(dim=1)
        return (self.head(x) + self.head_dist(x)) / 2


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_efficientformer torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = EfficientFormerT(count_pad=bug == "torch_pool_count_pad",
                         softmax_dim=-2 if bug == "torch_softmax_query_axis" else -1)
    return m.eval()


def _image():
    rng = np.random.default_rng(41)
    return rng.standard_normal((BATCH, IN_CHANS, IMG, IMG)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # class logits [1, 10]
    return (output**2).mean()
