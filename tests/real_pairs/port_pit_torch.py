"""Hand-written port, torch side: a tiny Pooling-based Vision Transformer (PiT) (written by "person B").

The same math as port_pit_paddle.py, re-implemented by hand in the style of timm's pit.py:
images [2, 3, 32, 32] (positional) -> logits [2, 10]. Patch conv 4x4 s4 (3 -> 16) + a learned
positional map [1, 16, 8, 8]; stage 0: 2 blocks (width 16, 2 heads); stage 1: pooling (depthwise
conv 3x3 s2 p1, multiplier 2, on the map; Linear(16, 32) on the class token) then 2 blocks
(width 32, 4 heads); LayerNorm (eps 1e-6) on the class token -> Linear(32, 10).

Torch idioms on this side:
- root `PiT`: `pos_embed` [1, 16, 8, 8], `patch_embed` (`ConvEmbedding` with a child `conv`),
  `cls_token` [1, 1, 16], `transformers` (nn.Sequential of two `Transformer` stages, called ONCE
  with the tuple (map, class tokens)), `norm`, `head`.
- `Transformer`: `pool` (a `ConvHeadPooling`, only in stage 1, registered BEFORE the blocks but
  only when given) and `blocks` (nn.Sequential). It takes and returns (map [B, C, H, W], class
  tokens [B, 1, C]): it pools, flattens the map to tokens, prepends the class tokens, runs the
  blocks and reshapes the patch tokens back into a map.
- `ConvHeadPooling(x, cls_token)`: `conv` (depthwise, multiplier 2) on the map and `fc` on the
  class tokens.
- `Attention`: ONE fused `qkv` Linear(dim, 3 * dim) (rows q | k | v), reshaped
  (B, N, 3, heads, head_dim) and unbound; `proj`.
- `Mlp`: `fc1`, `act` (nn.GELU), `fc2`.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_qkv_heads_first     -> Attention reshapes the fused qkv output as (B, N, heads, 3,
                               head_dim) instead of (B, N, 3, heads, head_dim), so q / k / v are
                               taken from the wrong columns (every block)
  torch_residual_from_norm  -> Block overwrites x with norm1(x) before the attention residual:
                               x = norm1(x); x = x + attn(x) (the residual branch starts from the
                               normalised tokens), in every block
"""
import os

import numpy as np
import torch
from torch import nn

OWN_BUGS = {"torch_qkv_heads_first", "torch_residual_from_norm"}
OTHER_BUGS = {"paddle_norm2_eps", "paddle_pool_pad0"}


class Attention(nn.Module):
    def __init__(self, dim, num_heads, heads_first=False):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim**-0.5
        self.heads_first = heads_first
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        if self.heads_first:
            qkv = self.qkv(x).reshape(B, N, self.num_heads, 3, self.head_dim).permute(3, 0, 2, 1, 4)
        else:
            qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class Mlp(nn.Module):
    def __init__(self, in_features, hidden_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden_features, in_features)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio=2.0, heads_first=False, residual_from_norm=False):
        super().__init__()
        self.residual_from_norm = residual_from_norm
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = Attention(dim, num_heads, heads_first)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = Mlp(dim, int(dim * mlp_ratio))

    def forward(self, x):
        if self.residual_from_norm:
            x = self.norm1(x)
            x = x + self.attn(x)
        else:
            x = x + self.attn(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return x


class ConvHeadPooling(nn.Module):
    def __init__(self, in_feature, out_feature, stride):
        super().__init__()
        self.conv = nn.Conv2d(in_feature, out_feature, kernel_size=stride + 1, padding=stride // 2,
                              stride=stride, padding_mode="zeros", groups=in_feature)
        self.fc = nn.Linear(in_feature, out_feature)

    def forward(self, x, cls_token):
        return self.conv(x), self.fc(cls_token)


class Transformer(nn.Module):
    def __init__(self, dim, depth, heads, pool=None, **block_kw):
        super().__init__()
        if pool is not None:
            self.pool = pool
        else:
            self.pool = None
        self.blocks = nn.Sequential(*[Block(dim, heads, **block_kw) for _ in range(depth)])

    def forward(self, x):
        x, cls_tokens = x
        if self.pool is not None:
            x, cls_tokens = self.pool(x, cls_tokens)
        B, C, H, W = x.shape
        token_length = cls_tokens.shape[1]
        x = x.flatten(2).transpose(1, 2)
        x = torch.cat((cls_tokens, x), dim=1)
        x = self.blocks(x)
        cls_tokens = x[:, :token_length]
        x = x[:, token_length:]
        x = x.transpose(1, 2).reshape(B, C, H, W)
        return x, cls_tokens


class ConvEmbedding(nn.Module):
    def __init__(self, in_channels, out_channels, patch_size, stride):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=patch_size, stride=stride, bias=True)

    def forward(self, x):
        return self.conv(x)


class PiT(nn.Module):
    def __init__(self, img_size=32, patch_size=4, num_classes=10, base_dims=(8, 8), heads=(2, 4),
                 depth=(2, 2), heads_first=False, residual_from_norm=False):
        super().__init__()
        embed_dims = [b * h for b, h in zip(base_dims, heads)]  # 16, 32
        side = img_size // patch_size
        kw = dict(heads_first=heads_first, residual_from_norm=residual_from_norm)
        self.pos_embed = nn.Parameter(torch.randn(1, embed_dims[0], side, side))
        self.patch_embed = ConvEmbedding(3, embed_dims[0], patch_size, patch_size)
        self.cls_token = nn.Parameter(torch.randn(1, 1, embed_dims[0]))
        stages = [Transformer(embed_dims[0], depth[0], heads[0], **kw)]
        stages.append(Transformer(embed_dims[1], depth[1], heads[1],
                                  pool=ConvHeadPooling(embed_dims[0], embed_dims[1], stride=2), **kw))
        self.transformers = nn.Sequential(*stages)
        self.norm = nn.LayerNorm(embed_dims[-1], eps=1e-6)
        self.head = nn.Linear(embed_dims[-1], num_classes)

    def forward(self, x):
        x = self.patch_embed(x)
        x = x + self.pos_embed
        cls_tokens = self.cls_token.expand(x.shape[0], -1, -1)
        x, cls_tokens = self.transformers((x, cls_tokens))
        cls_tokens = self.norm(cls_tokens)
        return self.head(cls_tokens[:, 0])


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_pit torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = PiT(heads_first=bug == "torch_qkv_heads_first", residual_from_norm=bug == "torch_residual_from_norm")
    return m.eval()


def _images():
    rng = np.random.default_rng(31)
    return rng.standard_normal((2, 3, 32, 32)).astype("float32")


def inputs():
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
