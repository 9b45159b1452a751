"""Hand-written port, torch side: a tiny DeiT-style distilled vision transformer (written by "person B").

The same function as port_deit_paddle.py, re-implemented by hand (lucidrains / timm mix): input
`img` [2, 3, 16, 16] (positional), patch 4 -> 16 patches, width 32, 4 heads of 8, MLP hidden 64
(exact GELU), 2 pre-norm layers, LayerNorm eps 1e-6, 10 classes. Output: logits [2, 10], the
average of the class head and the distillation head.

Token order on this side: [patch 0 .. patch 15, cls, dist] -- the two extra tokens are APPENDED
after the patches, and the position table [1, 18, 32] follows that order (rows 0:16 patches,
row 16 cls, row 17 dist).

Torch idioms on this side:
- root `DeiTClassifier`: `stem` (PatchTokenizer), `layers` (ModuleList of `EncoderLayer`),
  `final_norm` (nn.LayerNorm), `heads` = ONE nn.Linear(32, 20) applied to both extra tokens at
  once ([B, 2, 32] -> [B, 2, 20]); the class logits are columns 0:10 of the cls row, the
  distillation logits columns 10:20 of the dist row, averaged inline.
- `PatchTokenizer` registers `tokens` [1, 2, 32] (cls, dist packed in ONE parameter) and
  `pos_embed` [1, 18, 32] first, then `proj` = nn.Linear(48, 32) over patches cut with an
  einops-style rearrange 'b c (h p1) (w p2) -> b (h w) (p1 p2 c)' (reshape / permute inline).
- `EncoderLayer` registers `attention`, `ffn` BEFORE `ln_attn`, `ln_ffn`.
- `SelfAttention`: ONE fused `qkv` nn.Linear(32, 96) laid out [q | k | v] (timm layout),
  reshape(B, N, 3, H, D), then F.scaled_dot_product_attention, then `proj`.
- `ffn` = nn.Sequential(Linear(32, 64), nn.GELU(), Linear(64, 32)).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_qkv_headwise  -> the fused qkv output is reshaped as (B, N, H, 3, D) (head-major) instead
                         of (B, N, 3, H, D), so q / k / v take the wrong columns
  torch_pos_cls_first -> the tokenizer slices the position table as in the cls-first layout:
                         patches get pos_embed[:, 2:] and the cls / dist tokens pos_embed[:, :2]
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IMAGE_SIZE, PATCH_SIZE, CHANNELS = 16, 4, 3
EMBED_DIM, NUM_HEADS, FFN_DIM, NUM_LAYERS, N_CLASSES = 32, 4, 64, 2, 10
N_PATCHES = (IMAGE_SIZE // PATCH_SIZE) ** 2
BATCH = 2
OWN_BUGS = {"torch_qkv_headwise", "torch_pos_cls_first"}
OTHER_BUGS = {"paddle_ln_eps_default", "paddle_prenorm_residual"}


class PatchTokenizer(nn.Module):
    def __init__(self, cls_first_pos=False):
        super().__init__()
        self.cls_first_pos = cls_first_pos
        self.tokens = nn.Parameter(torch.zeros(1, 2, EMBED_DIM))
        self.pos_embed = nn.Parameter(torch.zeros(1, N_PATCHES + 2, EMBED_DIM))
        self.proj = nn.Linear(PATCH_SIZE * PATCH_SIZE * CHANNELS, EMBED_DIM)

    def forward(self, img):
        b, c, h, w = img.shape
        p = PATCH_SIZE
        # b c (h p1) (w p2) -> b (h w) (p1 p2 c)
        x = img.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 3, 5, 1).reshape(b, (h // p) * (w // p), p * p * c)
        x = self.proj(x)
        n = x.shape[1]
        if self.cls_first_pos:
            patch_pos, token_pos = self.pos_embed[:, 2:], self.pos_embed[:, :2]
        else:
            patch_pos, token_pos = self.pos_embed[:, :n], self.pos_embed[:, n:]
        x = x + patch_pos
        extra = (self.tokens + token_pos).expand(b, -1, -1)
        return torch.cat([x, extra], dim=1)


class SelfAttention(nn.Module):
    def __init__(self, headwise=False):
        super().__init__()
        self.heads = NUM_HEADS
        self.headwise = headwise
        self.qkv = nn.Linear(EMBED_DIM, 3 * EMBED_DIM)
        self.proj = nn.Linear(EMBED_DIM, EMBED_DIM)

    def forward(self, x):
        b, n, c = x.shape
        d = c // self.heads
        if self.headwise:
            q, k, v = self.qkv(x).reshape(b, n, self.heads, 3, d).permute(3, 0, 2, 1, 4).unbind(0)
        else:
            q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, d).permute(2, 0, 3, 1, 4).unbind(0)
        out = F.scaled_dot_product_attention(q, k, v)
        return self.proj(out.transpose(1, 2).reshape(b, n, c))


class EncoderLayer(nn.Module):
    def __init__(self, headwise=False):
        super().__init__()
        self.attention = SelfAttention(headwise)
        self.ffn = nn.Sequential(nn.Linear(EMBED_DIM, FFN_DIM), nn.GELU(), nn.Linear(FFN_DIM, EMBED_DIM))
        self.ln_attn = nn.LayerNorm(EMBED_DIM, eps=1e-6)
        self.ln_ffn = nn.LayerNorm(EMBED_DIM, eps=1e-6)

    def forward(self, x):
        x = x + self.attention(self.ln_attn(x))
        return x + self.ffn(self.ln_ffn(x))


class DeiTClassifier(nn.Module):
    def __init__(self, headwise=False, cls_first_pos=False):
        super().__init__()
        self.stem = PatchTokenizer(cls_first_pos)
        self.layers = nn.ModuleList([EncoderLayer(headwise) for _ in range(NUM_LAYERS)])
        self.final_norm = nn.LayerNorm(EMBED_DIM, eps=1e-6)
        self.heads = nn.Linear(EMBED_DIM, 2 * N_CLASSES)

    def forward(self, img):
        x = self.stem(img)
        for layer in self.layers:
            x = layer(x)
        x = self.final_norm(x)
        y = self.heads(x[:, -2:])  # [B, 2, 20]: row 0 the cls token, row 1 the dist token
        return 0.5 * (y[:, 0, :N_CLASSES] + y[:, 1, N_CLASSES:])


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_deit torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = DeiTClassifier(headwise=bug == "torch_qkv_headwise", cls_first_pos=bug == "torch_pos_cls_first")
    return m.eval()


def _image():
    rng = np.random.default_rng(23)
    return rng.standard_normal((BATCH, CHANNELS, IMAGE_SIZE, IMAGE_SIZE)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # averaged logits [2, 10]
    return (output**2).mean()
