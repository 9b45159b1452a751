"""Hand-written port, torch side: a tiny VideoMAE encoder for classification (inference, no masking),
written by "person B" (original VideoMAE / timm style).

The same math as port_videomae_paddle.py: video [2, 3, 4, 16, 16] (positional), tubelet 2 x patch
4 x 4 -> 32 tokens of width 32 in (t, h, w) order, + the fixed interleaved sinusoid table,
2 pre-norm blocks (4 heads of 8, q / v biases, no k bias, MLP 128, exact GELU, LayerNorm eps 1e-6),
mean pooling, fc_norm, head: logits [2, 5].

Torch idioms on this side:
- root `VisionTransformer`: `patch_embed`, `blocks` (ModuleList of `Block`), `fc_norm`, `head`.
- `TubeletEmbed` (`patch_embed`): NO convolution. It cuts the video into tubelets with
  view / permute, flattens each tubelet CHANNELS-LAST, in (pt, ph, pw, c) order (96 values), and
  projects them with a Linear `proj` (96 -> 32). It then adds the sinusoid position table, which
  it COMPUTES ON THE FLY in every forward (float64 torch ops, cast to float32): nothing is
  registered for it.
- `Attention`: ONE `qkv` Linear(32, 96, bias=False) and two bias parameters `q_bias`, `v_bias`;
  the forward assembles the qkv bias as cat(q_bias, zeros, v_bias) and calls F.linear; `proj`.
- `Block`: `norm1`, `attn`, `norm2`, `mlp`; `Mlp`: `fc1`, `fc2` with F.gelu inline.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_qkv_bias_order -> the qkv bias is assembled as cat(q_bias, v_bias, zeros): the keys get the
                          value bias and the values get no bias
  torch_norm1_reused   -> Block.forward normalises the MLP input with norm1 instead of norm2
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IN_CHANS, TUBELET_SIZE, PATCH_SIZE = 3, 2, 4
EMBED_DIM, NUM_HEADS, DEPTH, MLP_RATIO, NUM_CLASSES = 32, 4, 2, 4.0, 5
BATCH = 2
OWN_BUGS = {"torch_qkv_bias_order", "torch_norm1_reused"}
OTHER_BUGS = {"paddle_pos_halves", "paddle_gelu_tanh"}


def sinusoid_encoding(n_position, d_hid):
    """[1, n_position, d_hid]: sin on even channels, cos on odd ones, frequency 10000^(-2i/d)."""
    position = torch.arange(n_position, dtype=torch.float64).unsqueeze(1)
    inv_freq = torch.pow(10000.0, -torch.arange(0, d_hid, 2, dtype=torch.float64) / d_hid)
    angles = position * inv_freq  # [n, d/2]
    table = torch.stack([angles.sin(), angles.cos()], dim=-1).reshape(n_position, d_hid)
    return table.unsqueeze(0)


class TubeletEmbed(nn.Module):
    def __init__(self, in_chans=IN_CHANS, embed_dim=EMBED_DIM, tubelet_size=TUBELET_SIZE, patch_size=PATCH_SIZE):
        super().__init__()
        self.tubelet_size, self.patch_size = tubelet_size, patch_size
        self.proj = nn.Linear(in_chans * tubelet_size * patch_size * patch_size, embed_dim)

    def forward(self, x):  # [B, C, T, H, W]
        B, C, T, H, W = x.shape
        pt, p = self.tubelet_size, self.patch_size
        x = x.view(B, C, T // pt, pt, H // p, p, W // p, p)
        x = x.permute(0, 2, 4, 6, 3, 5, 7, 1)  # [B, T', H', W', pt, p, p, C]
        x = x.reshape(B, (T // pt) * (H // p) * (W // p), pt * p * p * C)
        x = self.proj(x)
        pos = sinusoid_encoding(x.shape[1], x.shape[2]).to(dtype=x.dtype, device=x.device)
        return x + pos


class Attention(nn.Module):
    def __init__(self, dim, num_heads, bias_order_bug=False):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.bias_order_bug = bias_order_bug
        self.qkv = nn.Linear(dim, dim * 3, bias=False)
        self.q_bias = nn.Parameter(torch.zeros(dim))
        self.v_bias = nn.Parameter(torch.zeros(dim))
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        k_bias = torch.zeros_like(self.v_bias, requires_grad=False)
        if self.bias_order_bug:
            qkv_bias = torch.cat((self.q_bias, self.v_bias, k_bias))
        else:
            qkv_bias = torch.cat((self.q_bias, k_bias, self.v_bias))
        qkv = F.linear(input=x, weight=self.qkv.weight, bias=qkv_bias)
        qkv = qkv.reshape(B, N, 3, self.num_heads, -1).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q * self.scale) @ k.transpose(-2, -1)
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class Mlp(nn.Module):
    def __init__(self, in_features, hidden_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.fc2 = nn.Linear(hidden_features, in_features)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio, bug=""):
        super().__init__()
        self.norm1_reused = bug == "torch_norm1_reused"
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = Attention(dim, num_heads, bias_order_bug=bug == "torch_qkv_bias_order")
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = Mlp(dim, int(dim * mlp_ratio))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        h = self.norm1(x) if self.norm1_reused else self.norm2(x)
        return x + self.mlp(h)


class VisionTransformer(nn.Module):
    def __init__(self, bug=""):
        super().__init__()
        self.patch_embed = TubeletEmbed()
        self.blocks = nn.ModuleList([Block(EMBED_DIM, NUM_HEADS, MLP_RATIO, bug) for _ in range(DEPTH)])
        self.fc_norm = nn.LayerNorm(EMBED_DIM, eps=1e-6)
        self.head = nn.Linear(EMBED_DIM, NUM_CLASSES)

    def forward_features(self, x):
        x = self.patch_embed(x)
        for blk in self.blocks:
            x = blk(x)
        return self.fc_norm(x.mean(1))

    def forward(self, x):
        return self.head(self.forward_features(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_videomae torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = VisionTransformer(bug if bug in OWN_BUGS else "")
    return m.eval()


def _video():
    rng = np.random.default_rng(41)
    return rng.standard_normal((BATCH, IN_CHANS, 4, 16, 16)).astype("float32")


def inputs():
    return (torch.from_numpy(_video()),), {}


def loss(output):
    # logits [2, 5]
    return (output**2).mean()
