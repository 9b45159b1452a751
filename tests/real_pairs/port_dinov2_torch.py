"""Hand-written port, torch side: a tiny DINOv2-style ViT backbone with register tokens (written by "person B").

The same math as port_dinov2_paddle.py, re-implemented in the layout of the facebookresearch/dinov2
reference code (vision_transformer.py / layers/*): input images [2, 3, 32, 32] (positional),
patch 8 (16 patch tokens), width 32, 4 heads, 2 blocks, SwiGLU hidden 48 (the reference's
SwiGLUFFNFused rounding of 2/3 x 64 up to a multiple of 8), LayerNorm eps 1e-6, 2 register
tokens, output the final norm of [CLS, registers, patches]: [2, 19, 32].

Torch idioms on this side:
- root `DinoVisionTransformer` registers `patch_embed` (`PatchEmbed`: `proj` nn.Conv2d(3, 32,
  kernel 8, stride 8), then flatten(2).transpose(1, 2), then its `norm` nn.Identity), then the
  parameters `cls_token` [1, 1, 32], `pos_embed` [1, 17, 32], `register_tokens` [1, 2, 32], then
  `blocks` (ModuleList of `Block`, iterated) and `norm`. As in the reference, pos_embed is added
  to cat(CLS, patches) and the registers are inserted after the CLS token afterwards.
- `Block` registers `norm1`, `attn`, `ls1`, `drop_path1`, `norm2`, `mlp`, `ls2`, `drop_path2`
  (the drop paths are nn.Identity and never called in this forward, as in the reference's
  inference path).
- `Attention`: ONE fused `qkv` nn.Linear(32, 96) (rows q | k | v, head-major inside each),
  reshape [B, N, 3, H, D] + permute; q * scale @ k^T, softmax; `attn_drop` / `proj_drop`
  nn.Dropout(0.0) modules; `proj`.
- `SwiGLUFFNFused`: ONE fused `w12` nn.Linear(32, 96) chunked into x1 | x2, F.silu(x1) * x2 inline,
  then `w3`.
- `LayerScale` modules `ls1` / `ls2`, each with a `gamma` [32] parameter (x * gamma).
- Weights keep torch's init; a run copies the paddle values (see the truth).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_attn_scale_dim -> Attention computes its scale from the model width, dim ** -0.5
                          (32 ** -0.5), instead of head_dim ** -0.5 (8 ** -0.5)
  torch_glu_sigmoid    -> SwiGLUFFNFused gates with torch.sigmoid(x1) * x2 (a plain GLU)
                          instead of F.silu(x1) * x2
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IMG_SIZE, PATCH_SIZE, IN_CHANS = 32, 8, 3
EMBED_DIM, NUM_HEADS, DEPTH, NUM_REGISTER_TOKENS = 32, 4, 2, 2
MLP_RATIO = 2.0
BATCH = 2
OWN_BUGS = {"torch_attn_scale_dim", "torch_glu_sigmoid"}
OTHER_BUGS = {"paddle_ls_gammas_swapped", "paddle_attn_norm_eps"}


class PatchEmbed(nn.Module):
    def __init__(self, img_size, patch_size, in_chans, embed_dim):
        super().__init__()
        self.num_patches = (img_size // patch_size) ** 2
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)
        self.norm = nn.Identity()

    def forward(self, x):
        x = self.proj(x)  # B C H W
        x = x.flatten(2).transpose(1, 2)  # B HW C
        return self.norm(x)


class Attention(nn.Module):
    def __init__(self, dim, num_heads, scale_from_dim=False):
        super().__init__()
        self.num_heads = num_heads
        head_dim = dim // num_heads
        self.scale = (dim if scale_from_dim else head_dim) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=True)
        self.attn_drop = nn.Dropout(0.0)
        self.proj = nn.Linear(dim, dim, bias=True)
        self.proj_drop = nn.Dropout(0.0)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0] * self.scale, qkv[1], qkv[2]
        attn = q @ k.transpose(-2, -1)
        attn = attn.softmax(dim=-1)
        attn = self.attn_drop(attn)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        x = self.proj(x)
        return self.proj_drop(x)


class SwiGLUFFNFused(nn.Module):
    def __init__(self, in_features, hidden_features, sigmoid_gate=False):
        super().__init__()
        hidden_features = (int(hidden_features * 2 / 3) + 7) // 8 * 8
        self.sigmoid_gate = sigmoid_gate
        self.w12 = nn.Linear(in_features, 2 * hidden_features, bias=True)
        self.w3 = nn.Linear(hidden_features, in_features, bias=True)

    def forward(self, x):
        x12 = self.w12(x)
        x1, x2 = x12.chunk(2, dim=-1)
        hidden = (torch.sigmoid(x1) if self.sigmoid_gate else F.silu(x1)) * x2
        return self.w3(hidden)


class LayerScale(nn.Module):
    def __init__(self, dim, init_values=1e-5):
        super().__init__()
        self.gamma = nn.Parameter(init_values * torch.ones(dim))

    def forward(self, x):
        return x * self.gamma


class Block(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio, bug=""):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = Attention(dim, num_heads, scale_from_dim=bug == "torch_attn_scale_dim")
        self.ls1 = LayerScale(dim)
        self.drop_path1 = nn.Identity()
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = SwiGLUFFNFused(dim, int(dim * mlp_ratio), sigmoid_gate=bug == "torch_glu_sigmoid")
        self.ls2 = LayerScale(dim)
        self.drop_path2 = nn.Identity()

    def forward(self, x):
        def attn_residual_func(x):
            return self.ls1(self.attn(self.norm1(x)))

        def ffn_residual_func(x):
            return self.ls2(self.mlp(self.norm2(x)))

        x = x + attn_residual_func(x)
        x = x + ffn_residual_func(x)
        return x


class DinoVisionTransformer(nn.Module):
    def __init__(self, bug=""):
        super().__init__()
        self.patch_embed = PatchEmbed(IMG_SIZE, PATCH_SIZE, IN_CHANS, EMBED_DIM)
        num_patches = self.patch_embed.num_patches
        self.cls_token = nn.Parameter(torch.zeros(1, 1, EMBED_DIM))
        self.pos_embed = nn.Parameter(torch.zeros(1, num_patches + 1, EMBED_DIM))
        self.register_tokens = nn.Parameter(torch.zeros(1, NUM_REGISTER_TOKENS, EMBED_DIM))
        self.blocks = nn.ModuleList([Block(EMBED_DIM, NUM_HEADS, MLP_RATIO, bug) for _ in range(DEPTH)])
        self.norm = nn.LayerNorm(EMBED_DIM, eps=1e-6)
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        nn.init.normal_(self.cls_token, std=1e-6)
        nn.init.normal_(self.register_tokens, std=1e-6)

    def prepare_tokens(self, x):
        B = x.shape[0]
        x = self.patch_embed(x)
        x = torch.cat((self.cls_token.expand(B, -1, -1), x), dim=1)
        x = x + self.pos_embed  # same grid as trained: no interpolation
        x = torch.cat((x[:, :1], self.register_tokens.expand(B, -1, -1), x[:, 1:]), dim=1)
        return x

    def forward(self, x):
        x = self.prepare_tokens(x)
        for blk in self.blocks:
            x = blk(x)
        return self.norm(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_dinov2 torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = DinoVisionTransformer(bug if bug in OWN_BUGS else "")
    return m.eval()


def _images():
    return np.random.default_rng(46).standard_normal((BATCH, IN_CHANS, IMG_SIZE, IMG_SIZE)).astype(np.float32)


def inputs():
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # normalised tokens [2, 19, 32]
    return (output**2).mean()
