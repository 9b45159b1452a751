"""Hand-written port, torch side: a tiny MobileViT-v2 style classifier (written by "person B").

The same math as port_mobilevitv2_paddle.py, re-implemented by hand in the style of ml-cvnets /
HF MobileViTV2: input [2, 3, 32, 32] (positional), logits [2, 10]. conv_stem (3x3 s2, 3 -> 16),
two inverted residuals (16 -> 16 s1 residual, 16 -> 24 s2, expand 2), one MobileViT-v2 block
(attention width 32, two LinearAttnFFN layers, FFN 64, 2x2 patches), a third inverted residual
(24 -> 32 s2), global average pool and a Linear classifier.

Torch idioms on this side:
- `InvertedResidual` holds ONE `conv` nn.Sequential of 8 modules in torchvision order:
  0 expand Conv2d, 1 BN, 2 act (nn.SiLU), 3 depthwise Conv2d, 4 BN, 5 nn.SiLU, 6 project
  Conv2d, 7 BN; the residual is inline.
- `MobileViTV2Block` registers `local_rep` (OrderedDict Sequential: `conv_3x3_in` =
  Sequential(depthwise Conv2d, BN, SiLU), `conv_1x1_in` = Conv2d 24 -> 32 no bias),
  `global_rep` (nn.Sequential of two LinearAttnFFN and a final nn.GroupNorm(1, 32), called
  ONCE) and `conv_proj` (Sequential(Conv2d 32 -> 24, BN)).
- Patches: F.unfold(kernel 2, stride 2) -> [B, 32 * 4, 16] -> view [B, 32, P = 4, N = 16] ->
  transpose to [B, 32, N, P]: patches here are laid out [B, d, N, P] (the paddle side keeps
  [B, d, P, N]). Fold: transpose back, reshape, F.fold.
- `LinearAttnFFN`: `pre_norm_attn` = Sequential(GroupNorm(1, 32), LinearSelfAttention) and
  `pre_norm_ffn` = Sequential(GroupNorm(1, 32), Conv2d 32 -> 64, nn.SiLU, Conv2d 64 -> 32);
  residual adds inline.
- `LinearSelfAttention`: ONE fused `qkv_proj` Conv2d(32, 1 + 32 + 32, 1) split into
  score | key | value channels; softmax over dim 2 (the N patches in this layout); `out_proj`.
- root `MobileViTV2`: `conv_stem` (Sequential Conv2d, BN, SiLU), `mv2` (nn.Sequential of the
  two early InvertedResidual, called once), `mvit`, `mv2_out` (the last InvertedResidual),
  `classifier`; the global pool is inline x.mean.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_softmax_dim  -> LinearSelfAttention takes the context-score softmax over dim=-1 (copied
                        from the reference's [B, d, P, N] layout), which in this [B, d, N, P]
                        layout is the 4 pixels of a patch instead of the 16 patches
  torch_expand_relu6 -> InvertedResidual's expand activation (conv.2) is nn.ReLU6, as in
                        torchvision's MobileNetV2, instead of nn.SiLU (the depthwise one stays
                        SiLU), in every inverted residual
"""
import os
from collections import OrderedDict

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

BATCH, SIZE, N_CLASSES = 2, 32, 10
ATTN_DIM, FFN_DIM, ATTN_BLOCKS, PATCH_H, PATCH_W = 32, 64, 2, 2, 2
OWN_BUGS = {"torch_softmax_dim", "torch_expand_relu6"}
OTHER_BUGS = {"paddle_fold_swap", "paddle_gn_eps"}


class InvertedResidual(nn.Module):
    def __init__(self, inp, oup, stride, expand_ratio, expand_act=nn.SiLU):
        super().__init__()
        hidden_dim = round(inp * expand_ratio)
        self.use_res_connect = stride == 1 and inp == oup
        self.conv = nn.Sequential(
            nn.Conv2d(inp, hidden_dim, 1, 1, 0, bias=False),
            nn.BatchNorm2d(hidden_dim),
            expand_act(),
            nn.Conv2d(hidden_dim, hidden_dim, 3, stride, 1, groups=hidden_dim, bias=False),
            nn.BatchNorm2d(hidden_dim),
            nn.SiLU(),
            nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
            nn.BatchNorm2d(oup),
        )

    def forward(self, x):
        if self.use_res_connect:
            return x + self.conv(x)
        return self.conv(x)


class LinearSelfAttention(nn.Module):
    """x: [B, d, N, P] -> [B, d, N, P]."""

    def __init__(self, embed_dim, softmax_dim=2):
        super().__init__()
        self.embed_dim = embed_dim
        self.softmax_dim = softmax_dim
        self.qkv_proj = nn.Conv2d(embed_dim, 1 + 2 * embed_dim, kernel_size=1, bias=True)
        self.out_proj = nn.Conv2d(embed_dim, embed_dim, kernel_size=1, bias=True)

    def forward(self, x):
        qkv = self.qkv_proj(x)
        query, key, value = torch.split(qkv, [1, self.embed_dim, self.embed_dim], dim=1)
        context_scores = F.softmax(query, dim=self.softmax_dim)
        context_vector = (key * context_scores).sum(dim=2, keepdim=True)  # [B, d, 1, P]
        out = F.relu(value) * context_vector.expand_as(value)
        return self.out_proj(out)


class LinearAttnFFN(nn.Module):
    def __init__(self, embed_dim, ffn_dim, softmax_dim=2):
        super().__init__()
        self.pre_norm_attn = nn.Sequential(
            nn.GroupNorm(1, embed_dim),
            LinearSelfAttention(embed_dim, softmax_dim),
        )
        self.pre_norm_ffn = nn.Sequential(
            nn.GroupNorm(1, embed_dim),
            nn.Conv2d(embed_dim, ffn_dim, 1, bias=True),
            nn.SiLU(),
            nn.Conv2d(ffn_dim, embed_dim, 1, bias=True),
        )

    def forward(self, x):
        x = x + self.pre_norm_attn(x)
        x = x + self.pre_norm_ffn(x)
        return x


class MobileViTV2Block(nn.Module):
    def __init__(self, in_channels, attn_dim, ffn_dim, n_blocks, softmax_dim=2):
        super().__init__()
        self.local_rep = nn.Sequential(OrderedDict([
            ("conv_3x3_in", nn.Sequential(
                nn.Conv2d(in_channels, in_channels, 3, 1, 1, groups=in_channels, bias=False),
                nn.BatchNorm2d(in_channels),
                nn.SiLU(),
            )),
            ("conv_1x1_in", nn.Conv2d(in_channels, attn_dim, 1, bias=False)),
        ]))
        layers = [LinearAttnFFN(attn_dim, ffn_dim, softmax_dim) for _ in range(n_blocks)]
        layers.append(nn.GroupNorm(1, attn_dim))
        self.global_rep = nn.Sequential(*layers)
        self.conv_proj = nn.Sequential(
            nn.Conv2d(attn_dim, in_channels, 1, bias=False),
            nn.BatchNorm2d(in_channels),
        )

    def unfolding(self, feature_map):
        batch_size, in_channels, img_h, img_w = feature_map.shape
        patches = F.unfold(feature_map, kernel_size=(PATCH_H, PATCH_W), stride=(PATCH_H, PATCH_W))
        patches = patches.reshape(batch_size, in_channels, PATCH_H * PATCH_W, -1)
        return patches.transpose(2, 3), (img_h, img_w)  # [B, d, N, P]

    def folding(self, patches, output_size):
        batch_size, in_dim, n_patches, patch_size = patches.shape
        patches = patches.transpose(2, 3).reshape(batch_size, in_dim * patch_size, n_patches)
        return F.fold(patches, output_size=output_size, kernel_size=(PATCH_H, PATCH_W),
                      stride=(PATCH_H, PATCH_W))

    def forward(self, x):
        fm = self.local_rep(x)
        patches, output_size = self.unfolding(fm)
        patches = self.global_rep(patches)
        fm = self.folding(patches, output_size)
        return self.conv_proj(fm)


class MobileViTV2(nn.Module):
    def __init__(self, softmax_dim=2, expand_act=nn.SiLU):
        super().__init__()
        self.conv_stem = nn.Sequential(
            nn.Conv2d(3, 16, 3, 2, 1, bias=False),
            nn.BatchNorm2d(16),
            nn.SiLU(),
        )
        self.mv2 = nn.Sequential(
            InvertedResidual(16, 16, 1, 2, expand_act),
            InvertedResidual(16, 24, 2, 2, expand_act),
        )
        self.mvit = MobileViTV2Block(24, ATTN_DIM, FFN_DIM, ATTN_BLOCKS, softmax_dim)
        self.mv2_out = InvertedResidual(24, 32, 2, 2, expand_act)
        self.classifier = nn.Linear(32, N_CLASSES)

    def forward(self, x):
        x = self.conv_stem(x)
        x = self.mv2(x)
        x = self.mvit(x)
        x = self.mv2_out(x)
        return self.classifier(x.mean(dim=(2, 3)))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_mobilevitv2 torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = MobileViTV2(softmax_dim=-1 if bug == "torch_softmax_dim" else 2,
                    expand_act=nn.ReLU6 if bug == "torch_expand_relu6" else nn.SiLU)
    return m.eval()


def _image():
    rng = np.random.default_rng(4141)
    return rng.standard_normal((BATCH, 3, SIZE, SIZE)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
