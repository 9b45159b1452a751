"""Hand-written port, torch side: a tiny LeViT (written by "person B").

The same math as port_levit_paddle.py, re-implemented by hand in a timm-like style: 32x32 RGB
images, a conv stem (3 -> 8 -> 16, two 3x3 stride-2 convs each followed by BatchNorm2d, hardswish
between) to an 8x8 grid of width 16, then on [B, N, C] tokens a block at width 16 (attention 2
heads, key dim 4, value dim 8; MLP 16 -> 32 -> 16), a downsample (shrinking attention with
stride-2 queries, 4 heads, key dim 4, value dim 16, 16 -> 24, no residual; MLP 24 -> 48 -> 24),
a block at width 24 (3 heads, key dim 4, value dim 8), mean over tokens, BatchNorm1d and
Linear(24, 10): logits [2, 10].

Torch idioms on this side:
- root `LevitNet`: `stem` (`ConvStem`: conv1, bn1, conv2, bn2, with F.hardswish inline),
  `stage1` (`LevitBlock`), `downsample` (`LevitDownsample`), `stage2` (`LevitBlock`),
  `head_norm` (nn.BatchNorm1d) and `head_fc` (nn.Linear) at the root.
- `LinearNorm`: `linear` (nn.Linear, no bias) and `bn` (nn.BatchNorm1d) applied on the channel
  axis of [B, C, N]: bn(linear(x).transpose(1, 2)).transpose(1, 2).
- `LevitBlock`: `attn`, `mlp`, residual adds inline. `LevitMlp`: `fc1`, `fc2` (LinearNorm),
  F.hardswish inline.
- `LevitAttention` registers its bias table FIRST: `rel_pos_bias` [64, heads] (Swin-style
  layout: one row per offset), then SEPARATE `q`, `k`, `v` LinearNorm projections and `out`;
  the non-persistent buffer `rel_index` [N, N] = |dy| * res + |dx| comes from a meshgrid; the
  bias is `rel_pos_bias[rel_index].permute(2, 0, 1)`; hardswish is inline before `out`.
- `ShrinkAttention`: a fused `kv` LinearNorm in BLOCK layout (all heads' keys, then all heads'
  values), the query tokens picked inline with x.view(B, 8, 8, C)[:, ::2, ::2], then `q`, then
  `out`; the table `rel_pos_bias` [64, 4] is registered last, and `rel_index` [16, 64] uses the
  query positions (2 qy, 2 qx).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_scale_uses_dv     -> LevitAttention scales the scores by value_dim^-0.5 (8^-0.5)
                             instead of key_dim^-0.5 (4^-0.5)
  torch_subsample_offset  -> ShrinkAttention picks the query tokens with [:, 1::2, 1::2]
                             instead of [:, ::2, ::2]
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IMG, N_CLASSES, BATCH = 32, 10, 2
OWN_BUGS = {"torch_scale_uses_dv", "torch_subsample_offset"}
OTHER_BUGS = {"paddle_sub_bias_no_stride", "paddle_stem_bn_eps"}


class ConvStem(nn.Module):
    def __init__(self, in_chans=3, mid=8, out=16):
        super().__init__()
        self.conv1 = nn.Conv2d(in_chans, mid, 3, 2, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(mid)
        self.conv2 = nn.Conv2d(mid, out, 3, 2, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out)

    def forward(self, x):
        x = F.hardswish(self.bn1(self.conv1(x)))
        return self.bn2(self.conv2(x))


class LinearNorm(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=False)
        self.bn = nn.BatchNorm1d(out_features)

    def forward(self, x):
        return self.bn(self.linear(x).transpose(1, 2)).transpose(1, 2)


def _grid(res, step=1):
    ys, xs = torch.meshgrid(torch.arange(res), torch.arange(res), indexing="ij")
    return torch.stack([ys.flatten(), xs.flatten()]) * step  # [2, res*res]


class LevitAttention(nn.Module):
    def __init__(self, dim, key_dim, num_heads, attn_ratio, resolution, scale_uses_dv=False):
        super().__init__()
        self.num_heads, self.key_dim = num_heads, key_dim
        self.val_dim = int(attn_ratio * key_dim)
        self.scale = (self.val_dim if scale_uses_dv else key_dim) ** -0.5
        self.rel_pos_bias = nn.Parameter(torch.zeros(resolution * resolution, num_heads))
        self.q = LinearNorm(dim, key_dim * num_heads)
        self.k = LinearNorm(dim, key_dim * num_heads)
        self.v = LinearNorm(dim, self.val_dim * num_heads)
        self.out = LinearNorm(self.val_dim * num_heads, dim)
        pos = _grid(resolution)
        rel = (pos[:, :, None] - pos[:, None, :]).abs()
        self.register_buffer("rel_index", rel[0] * resolution + rel[1], persistent=False)

    def forward(self, x):
        B, N, _ = x.shape
        q = self.q(x).view(B, N, self.num_heads, self.key_dim).transpose(1, 2)
        k = self.k(x).view(B, N, self.num_heads, self.key_dim).transpose(1, 2)
        v = self.v(x).view(B, N, self.num_heads, self.val_dim).transpose(1, 2)
        bias = self.rel_pos_bias[self.rel_index].permute(2, 0, 1)
        attn = (q @ k.transpose(-2, -1)) * self.scale + bias
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, -1)
        return self.out(F.hardswish(x))


class ShrinkAttention(nn.Module):
    def __init__(self, in_dim, out_dim, key_dim, num_heads, attn_ratio, stride, resolution, odd_offset=False):
        super().__init__()
        self.num_heads, self.key_dim = num_heads, key_dim
        self.val_dim = int(attn_ratio * key_dim)
        self.scale = key_dim**-0.5
        self.stride, self.resolution = stride, resolution
        self.res_out = (resolution - 1) // stride + 1
        self.start = 1 if odd_offset else 0
        self.kv = LinearNorm(in_dim, (key_dim + self.val_dim) * num_heads)
        self.q = LinearNorm(in_dim, key_dim * num_heads)
        self.out = LinearNorm(self.val_dim * num_heads, out_dim)
        self.rel_pos_bias = nn.Parameter(torch.zeros(resolution * resolution, num_heads))
        q_pos, k_pos = _grid(self.res_out, stride), _grid(resolution)
        rel = (q_pos[:, :, None] - k_pos[:, None, :]).abs()
        self.register_buffer("rel_index", rel[0] * resolution + rel[1], persistent=False)

    def forward(self, x):
        B, N, C = x.shape
        k, v = self.kv(x).split([self.key_dim * self.num_heads, self.val_dim * self.num_heads], dim=-1)
        k = k.view(B, N, self.num_heads, self.key_dim).transpose(1, 2)
        v = v.view(B, N, self.num_heads, self.val_dim).transpose(1, 2)
        xq = x.view(B, self.resolution, self.resolution, C)[:, self.start :: self.stride, self.start :: self.stride]
        xq = xq.reshape(B, -1, C)
        q = self.q(xq).view(B, -1, self.num_heads, self.key_dim).transpose(1, 2)
        attn = (q @ k.transpose(-2, -1)) * self.scale + self.rel_pos_bias[self.rel_index].permute(2, 0, 1)
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, q.shape[2], -1)
        return self.out(F.hardswish(x))


class LevitMlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = LinearNorm(dim, hidden)
        self.fc2 = LinearNorm(hidden, dim)

    def forward(self, x):
        return self.fc2(F.hardswish(self.fc1(x)))


class LevitBlock(nn.Module):
    def __init__(self, dim, key_dim, num_heads, attn_ratio, resolution, mlp_ratio=2, scale_uses_dv=False):
        super().__init__()
        self.attn = LevitAttention(dim, key_dim, num_heads, attn_ratio, resolution, scale_uses_dv)
        self.mlp = LevitMlp(dim, dim * mlp_ratio)

    def forward(self, x):
        x = x + self.attn(x)
        return x + self.mlp(x)


class LevitDownsample(nn.Module):
    def __init__(self, in_dim, out_dim, odd_offset=False):
        super().__init__()
        self.attn_downsample = ShrinkAttention(in_dim, out_dim, 4, in_dim // 4, 4, 2, 8, odd_offset)
        self.mlp = LevitMlp(out_dim, out_dim * 2)

    def forward(self, x):
        x = self.attn_downsample(x)
        return x + self.mlp(x)


class LevitNet(nn.Module):
    def __init__(self, scale_uses_dv=False, odd_offset=False):
        super().__init__()
        self.stem = ConvStem()
        self.stage1 = LevitBlock(16, 4, 2, 2, 8, scale_uses_dv=scale_uses_dv)
        self.downsample = LevitDownsample(16, 24, odd_offset)
        self.stage2 = LevitBlock(24, 4, 3, 2, 4, scale_uses_dv=scale_uses_dv)
        self.head_norm = nn.BatchNorm1d(24)
        self.head_fc = nn.Linear(24, N_CLASSES)

    def forward(self, x):
        x = self.stem(x).flatten(2).transpose(1, 2)
        x = self.stage2(self.downsample(self.stage1(x)))
        return self.head_fc(self.head_norm(x.mean(dim=1)))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_levit torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = LevitNet(scale_uses_dv=bug == "torch_scale_uses_dv", odd_offset=bug == "torch_subsample_offset")
    return m.eval()


def _images():
    return np.random.default_rng(31).standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
