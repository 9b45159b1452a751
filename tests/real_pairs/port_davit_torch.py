"""Hand-written port, torch side: a tiny DaViT (dual attention vision transformer), written by "person B".

The same math as port_davit_paddle.py, re-implemented by hand in the style of timm's davit.py:
input image [2, 3, 32, 32] (positional), stem conv 7x7/4 + LayerNorm2d, stage 0 (dim 16, 2 heads,
window 4: spatial block + channel block), stage 1 (LayerNorm2d + conv 2x2/2 downsample to dim 32,
4 heads, window 2: spatial block + channel block), head (mean pool, LayerNorm, Linear): logits
[2, 10].

Torch idioms on this side:
- feature maps stay NCHW between stages and NHWC [B, H, W, C] inside the blocks.
- root `DaVit`: `stem` (`conv`, `norm` = LayerNorm2d), `stages` = ModuleList of `DaVitStage`
  (`downsample`: nn.Identity in stage 0, `Downsample` (`norm` LayerNorm2d, `conv`) in stage 1;
  `blocks` = nn.Sequential(SpatialBlock, ChannelBlock)), `head` = `ClassifierHead` (`norm`,
  `fc`; the mean pool is inline in the head).
- the ConvPosEnc is INLINE in the blocks: each block owns two depthwise convs `cpe_dw1`,
  `cpe_dw2` and adds their output to its input in its own forward.
- window partition with Tensor.unfold (window reverse with view / permute), both inline in
  SpatialBlock.forward.
- both attentions use ONE fused `qkv` Linear(C, 3C) laid out [q | k | v] and `proj`.
- `Mlp`: `fc1`, `act` (nn.GELU module), `fc2`.
- LayerNorm2d is nn.LayerNorm applied over channels with permutes.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_shortcut_before_cpe -> the spatial block takes the attention shortcut from its input
                               BEFORE the first ConvPosEnc (x = x_in + attn(norm1(cpe(x_in))))
  torch_chan_softmax_bf16   -> the channel attention keeps its softmax probabilities in
                               bfloat16 (cast back to float32 before the value product)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IN_CHANS, NUM_CLASSES = 3, 10
EMBED_DIMS, NUM_HEADS, WINDOW_SIZES = (16, 32), (2, 4), (4, 2)
MLP_RATIO = 4
BATCH = 2
OWN_BUGS = {"torch_shortcut_before_cpe", "torch_chan_softmax_bf16"}
OTHER_BUGS = {"paddle_window_rev_no_transpose", "paddle_cpe_reshape_no_transpose"}


class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over the channels of an NCHW map."""

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class WindowAttention(nn.Module):
    def __init__(self, dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        head_dim = dim // num_heads
        self.scale = head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B_, N, C = x.shape
        qkv = self.qkv(x).reshape(B_, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q * self.scale) @ k.transpose(-2, -1)
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B_, N, C)
        return self.proj(x)


class ChannelAttention(nn.Module):
    def __init__(self, dim, num_heads, softmax_bf16=False):
        super().__init__()
        self.num_heads = num_heads
        head_dim = dim // num_heads
        self.scale = head_dim ** -0.5
        self.softmax_bf16 = softmax_bf16
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)  # [B, h, N, d]
        attn = (q.transpose(-1, -2) * self.scale) @ k  # [B, h, d, d]
        attn = attn.softmax(dim=-1)
        if self.softmax_bf16:
            attn = attn.to(torch.bfloat16).float()
        x = (attn @ v.transpose(-1, -2)).transpose(-1, -2)  # [B, h, N, d]
        x = x.transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class SpatialBlock(nn.Module):
    def __init__(self, dim, num_heads, window_size, shortcut_before_cpe=False):
        super().__init__()
        self.window_size = window_size
        self.shortcut_before_cpe = shortcut_before_cpe
        self.cpe_dw1 = nn.Conv2d(dim, dim, 3, padding=1, groups=dim)
        self.norm1 = nn.LayerNorm(dim)
        self.attn = WindowAttention(dim, num_heads)
        self.cpe_dw2 = nn.Conv2d(dim, dim, 3, padding=1, groups=dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, dim * MLP_RATIO)

    def forward(self, x):  # [B, H, W, C]
        B, H, W, C = x.shape
        ws = self.window_size
        x_in = x
        x = x + self.cpe_dw1(x.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)
        shortcut = x_in if self.shortcut_before_cpe else x
        windows = self.norm1(x).unfold(1, ws, ws).unfold(2, ws, ws)  # [B, H/ws, W/ws, C, ws, ws]
        windows = windows.permute(0, 1, 2, 4, 5, 3).reshape(-1, ws * ws, C)
        windows = self.attn(windows)
        x = windows.view(B, H // ws, W // ws, ws, ws, C).permute(0, 1, 3, 2, 4, 5).reshape(B, H, W, C)
        x = shortcut + x
        x = x + self.cpe_dw2(x.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)
        return x + self.mlp(self.norm2(x))


class ChannelBlock(nn.Module):
    def __init__(self, dim, num_heads, softmax_bf16=False):
        super().__init__()
        self.cpe_dw1 = nn.Conv2d(dim, dim, 3, padding=1, groups=dim)
        self.norm1 = nn.LayerNorm(dim)
        self.attn = ChannelAttention(dim, num_heads, softmax_bf16)
        self.cpe_dw2 = nn.Conv2d(dim, dim, 3, padding=1, groups=dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, dim * MLP_RATIO)

    def forward(self, x):  # [B, H, W, C]
        B, H, W, C = x.shape
        x = x + self.cpe_dw1(x.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)
        tokens = x.reshape(B, H * W, C)
        tokens = tokens + self.attn(self.norm1(tokens))
        x = tokens.view(B, H, W, C)
        x = x + self.cpe_dw2(x.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)
        return x + self.mlp(self.norm2(x))


class Stem(nn.Module):
    def __init__(self, in_chs, out_chs):
        super().__init__()
        self.conv = nn.Conv2d(in_chs, out_chs, kernel_size=7, stride=4, padding=3)
        self.norm = LayerNorm2d(out_chs)

    def forward(self, x):
        return self.norm(self.conv(x))


class Downsample(nn.Module):
    def __init__(self, in_chs, out_chs):
        super().__init__()
        self.norm = LayerNorm2d(in_chs)
        self.conv = nn.Conv2d(in_chs, out_chs, kernel_size=2, stride=2)

    def forward(self, x):
        return self.conv(self.norm(x))


class DaVitStage(nn.Module):
    def __init__(self, in_chs, out_chs, num_heads, window_size, downsample, bug=""):
        super().__init__()
        self.downsample = Downsample(in_chs, out_chs) if downsample else nn.Identity()
        self.blocks = nn.Sequential(
            SpatialBlock(out_chs, num_heads, window_size, bug == "torch_shortcut_before_cpe"),
            ChannelBlock(out_chs, num_heads, bug == "torch_chan_softmax_bf16"),
        )

    def forward(self, x):  # NCHW in and out
        x = self.downsample(x)
        x = self.blocks(x.permute(0, 2, 3, 1))
        return x.permute(0, 3, 1, 2)


class ClassifierHead(nn.Module):
    def __init__(self, in_features, num_classes):
        super().__init__()
        self.norm = nn.LayerNorm(in_features)
        self.fc = nn.Linear(in_features, num_classes)

    def forward(self, x):  # NCHW
        return self.fc(self.norm(x.mean(dim=(2, 3))))


class DaVit(nn.Module):
    def __init__(self, bug=""):
        super().__init__()
        self.stem = Stem(IN_CHANS, EMBED_DIMS[0])
        stages = []
        in_chs = EMBED_DIMS[0]
        for i, (dim, heads, ws) in enumerate(zip(EMBED_DIMS, NUM_HEADS, WINDOW_SIZES)):
            stages.append(DaVitStage(in_chs, dim, heads, ws, downsample=i > 0, bug=bug))
            in_chs = dim
        self.stages = nn.ModuleList(stages)
        self.head = ClassifierHead(EMBED_DIMS[-1], NUM_CLASSES)

    def forward(self, x):
        x = self.stem(x)
        for stage in self.stages:
            x = stage(x)
        return self.head(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_davit torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = DaVit(bug if bug in OWN_BUGS else "")
    return m.eval()


def _image():
    rng = np.random.default_rng(31)
    return rng.standard_normal((BATCH, IN_CHANS, 32, 32)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
