"""Hand-written port, torch side: the same tiny MobileViT-style classifier (written by "person B",
ml-cvnets-flavoured, independently of port_mobilevit_paddle.py).

Sizes: RGB 32x32, batch 2, 10 classes, eval mode, fp32; channels 16, transformer width 32,
2 heads, MLP 64, 2x2 patches on the 16x16 map (P = 4 pixels per patch, N = 64 patches).
- `stem` nn.Sequential(Conv2d(3, 16, 3, 2, 1, bias=False), BatchNorm2d, SiLU).
- `ir` InvertedResidual: `block` nn.Sequential(1x1 expand conv, BN, SiLU, 3x3 depthwise conv,
  BN, SiLU, 1x1 project conv, BN) = indices 0..7, + the input (stride 1, 16 -> 16).
- `mvit` MobileViTBlock:
    local_rep   nn.Sequential(conv_3x3 = Sequential(Conv2d, BN, SiLU), conv_1x1 = Conv2d 16 -> 32)
    unfolding   ml-cvnets' two-step reshape: [B*d*nh, ph, nw, pw] -transpose(1, 2)->
                [B*d*nh, nw, ph, pw] -> [B, d, N, P] -transpose(1, 3)-> [B, P, N, d] -> [B*P, N, d]
    global_rep  nn.Sequential(TransformerEncoder, LayerNorm(32)); the encoder: pre_norm_mha
                (ln1, attn = nn.MultiheadAttention(32, 2, batch_first=True): packed in_proj
                [96, 32] q | k | v and out_proj), pre_norm_ffn (ln2, ffn = nn.Sequential(Linear,
                SiLU, Linear))
    folding     the inverse of unfolding
    conv_proj   nn.Sequential(Conv2d 1x1 32 -> 16, BN, SiLU)
    fusion      nn.Sequential(Conv2d 3x3 32 -> 16, BN, SiLU) on torch.cat((res, fm), dim=1)
- `classifier` nn.Sequential(AdaptiveAvgPool2d(1), Flatten, Linear(16, 10)).

PADIFF_BUG (this side's bugs; the paddle side's names are accepted and ignored, any other name
raises ValueError):
  torch_fold_transposed       -> folding reshapes the patch-pixel axis as (pw, ph) instead of
                                 (ph, pw): every 2x2 patch is written back transposed
  torch_fusion_concat_swapped -> the fusion conv gets torch.cat((fm, res)) instead of
                                 torch.cat((res, fm)) (the fusion conv weight is unchanged, so its
                                 input-channel halves meet the wrong features)
"""
import os

import numpy as np
import torch
from torch import nn

BATCH, IN_CHANS, IMG, CLASSES = 2, 3, 32, 10
C, EXPAND, D, HEADS, MLP_DIM, PATCH = 16, 2, 32, 2, 64, 2
OWN_BUGS = {"torch_fold_transposed", "torch_fusion_concat_swapped"}
OTHER_BUGS = {"paddle_softmax_axis", "paddle_mlp_relu"}


def conv_bn_act(cin, cout, k, stride=1, groups=1, act=True):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if act:
        layers.append(nn.SiLU())
    return nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, expand):
        super().__init__()
        hid = cin * expand
        self.block = nn.Sequential(
            nn.Conv2d(cin, hid, 1, bias=False), nn.BatchNorm2d(hid), nn.SiLU(),
            nn.Conv2d(hid, hid, 3, 1, 1, groups=hid, bias=False), nn.BatchNorm2d(hid), nn.SiLU(),
            nn.Conv2d(hid, cout, 1, bias=False), nn.BatchNorm2d(cout),
        )
        self.use_res_connect = cin == cout

    def forward(self, x):
        return x + self.block(x) if self.use_res_connect else self.block(x)


class TransformerEncoder(nn.Module):
    def __init__(self, dim, heads, ffn_dim):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(dim)
        self.ffn = nn.Sequential(nn.Linear(dim, ffn_dim), nn.SiLU(), nn.Linear(ffn_dim, dim))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.ffn(self.ln2(x))


class MobileViTBlock(nn.Module):
    def __init__(self, channels, dim, fold_transposed=False, concat_swapped=False):
        super().__init__()
        self.local_rep = nn.Sequential()
        self.local_rep.add_module("conv_3x3", conv_bn_act(channels, channels, 3))
        self.local_rep.add_module("conv_1x1", nn.Conv2d(channels, dim, 1, bias=False))
        self.global_rep = nn.Sequential(TransformerEncoder(dim, HEADS, MLP_DIM), nn.LayerNorm(dim))
        self.conv_proj = conv_bn_act(dim, channels, 1)
        self.fusion = conv_bn_act(2 * channels, channels, 3)
        self.patch_h = self.patch_w = PATCH
        self.fold_transposed = fold_transposed
        self.concat_swapped = concat_swapped

    def unfolding(self, fm):
        B, Cd, H, W = fm.shape
        ph, pw = self.patch_h, self.patch_w
        nh, nw = H // ph, W // pw
        N, P = nh * nw, ph * pw
        x = fm.reshape(B * Cd * nh, ph, nw, pw).transpose(1, 2)  # [B*C*nh, nw, ph, pw]
        x = x.reshape(B, Cd, N, P).transpose(1, 3)  # [B, P, N, C]
        x = x.reshape(B * P, N, Cd)
        return x, dict(batch=B, channels=Cd, h=H, w=W, nh=nh, nw=nw, N=N, P=P)

    def folding(self, x, info):
        B, Cd, N, P = info["batch"], info["channels"], info["N"], info["P"]
        ph, pw, nh, nw = self.patch_h, self.patch_w, info["nh"], info["nw"]
        x = x.contiguous().view(B, P, N, Cd).transpose(1, 3)  # [B, C, N, P]
        if self.fold_transposed:
            x = x.reshape(B * Cd * nh, nw, pw, ph).permute(0, 3, 1, 2)
        else:
            x = x.reshape(B * Cd * nh, nw, ph, pw).transpose(1, 2)  # [B*C*nh, ph, nw, pw]
        return x.reshape(B, Cd, info["h"], info["w"])

    def forward(self, x):
        res = x
        fm = self.local_rep(x)
        patches, info = self.unfolding(fm)
        patches = self.global_rep(patches)
        fm = self.conv_proj(self.folding(patches, info))
        fm = torch.cat((fm, res), dim=1) if self.concat_swapped else torch.cat((res, fm), dim=1)
        return self.fusion(fm)


class MobileViT(nn.Module):
    def __init__(self, fold_transposed=False, concat_swapped=False):
        super().__init__()
        self.stem = conv_bn_act(IN_CHANS, C, 3, stride=2)
        self.ir = InvertedResidual(C, C, EXPAND)
        self.mvit = MobileViTBlock(C, D, fold_transposed, concat_swapped)
        self.classifier = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(C, CLASSES))

    def forward(self, x):
        return self.classifier(self.mvit(self.ir(self.stem(x))))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_mobilevit torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = MobileViT(fold_transposed=bug == "torch_fold_transposed",
                  concat_swapped=bug == "torch_fusion_concat_swapped")
    return m.eval()


def _images():
    return np.random.default_rng(3).standard_normal((BATCH, IN_CHANS, IMG, IMG)).astype("float32")


def inputs():
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
