"""Hand-written port, torch side: the same tiny Vision Transformer re-implemented in PyTorch by a
second person, torchvision-style. Tiny: 32x32 images, 8x8 patches (16 patches + a class token),
width 32, 4 heads, 3 pre-norm blocks, MLP 64, 10 classes.

Torch idioms on this side: the patch conv `conv_proj` and the `class_token` live on the root, the
position embedding lives in the `encoder` (added there, torchvision-style), the blocks are an
`nn.Sequential(OrderedDict(encoder_layer_i=...))`, each block registers `ln_1` / `ln_2` before
its `self_attention` / `mlp`, the attention is hand-written with ONE fused `qkv` Linear
([3*dim, dim], rows q | k | v) and a `proj`, the MLP is a small module (`fc1`, `act`, `fc2`),
the classifier is `heads.head`.

Planted bugs (PADIFF_BUG): see port_vit_truth.json.
"""
import os
from collections import OrderedDict

import numpy as np
import torch
from torch import nn

IMG, PATCH, DIM, HEADS, DEPTH, MLP, CLASSES = 32, 8, 32, 4, 3, 64, 10


class SelfAttention(nn.Module):
    def __init__(self, dim=DIM, num_heads=HEADS):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim**-0.5
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)  # [B, heads, N, head_dim]
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class MLP(nn.Module):
    def __init__(self, dim=DIM, hidden=MLP):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class EncoderBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(DIM, eps=1e-6)
        self.ln_2 = nn.LayerNorm(DIM, eps=1e-6)
        self.self_attention = SelfAttention()
        self.mlp = MLP()

    def forward(self, x):
        x = x + self.self_attention(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Encoder(nn.Module):
    def __init__(self, seq_length, depth=DEPTH):
        super().__init__()
        self.pos_embedding = nn.Parameter(torch.empty(1, seq_length, DIM).normal_(std=0.02))
        self.layers = nn.Sequential(OrderedDict((f"encoder_layer_{i}", EncoderBlock()) for i in range(depth)))
        self.ln = nn.LayerNorm(DIM, eps=1e-6)

    def forward(self, x):
        return self.ln(self.layers(x + self.pos_embedding))


class ViT(nn.Module):
    def __init__(self, num_classes=CLASSES):
        super().__init__()
        self.class_token = nn.Parameter(torch.zeros(1, 1, DIM))
        self.conv_proj = nn.Conv2d(3, DIM, kernel_size=PATCH, stride=PATCH)
        self.encoder = Encoder((IMG // PATCH) ** 2 + 1)
        self.heads = nn.Sequential(OrderedDict(head=nn.Linear(DIM, num_classes)))

    def forward(self, x):
        n = x.shape[0]
        x = self.conv_proj(x)  # [B, D, h, w]
        x = x.reshape(n, DIM, -1).permute(0, 2, 1)  # [B, h*w, D]
        x = torch.cat([self.class_token.expand(n, -1, -1), x], dim=1)
        x = self.encoder(x)
        return self.heads(x[:, 0])


def _head_split_forward(att):
    """SelfAttention.forward where the fused qkv output is split into heads as
    [3, head_dim, heads] instead of [3, heads, head_dim] (the per-head features are taken with a
    stride of `heads` instead of contiguously); the merge back is the usual one."""
    def forward(x):
        B, N, C = x.shape
        qkv = att.qkv(x).reshape(B, N, 3, att.head_dim, att.num_heads).permute(2, 0, 4, 1, 3)
        q, k, v = qkv.unbind(0)
        attn = ((q @ k.transpose(-2, -1)) * att.scale).softmax(dim=-1)
        return att.proj((attn @ v).transpose(1, 2).reshape(B, N, C))
    return forward


def model():
    torch.manual_seed(0)
    m = ViT().eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "attn_scale":
        # scale 1/sqrt(model dim) = 1/sqrt(32) instead of 1/sqrt(head dim) = 1/sqrt(8)
        m.encoder.layers.encoder_layer_0.self_attention.scale = DIM**-0.5
    elif bug == "head_split":
        att = m.encoder.layers.encoder_layer_1.self_attention
        att.forward = _head_split_forward(att)
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, IMG, IMG)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    # logits [2, 10] of a Linear on the final-LayerNormed class token: a mean of squares depends on all of it
    return (output**2).mean()
