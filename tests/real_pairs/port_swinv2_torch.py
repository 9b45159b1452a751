"""Hand-written port, torch side: a tiny Swin-V2 style stage with a classifier (written by "person B").

The same math as port_swinv2_paddle.py, re-implemented by hand in the style of the official
Microsoft Swin-Transformer V2 code: images [2, 3, 16, 16] (positional), patch embedding 2x2
stride 2 (3 -> 32) + LayerNorm, an 8x8 token grid, one stage (`BasicLayer`) of 2 blocks, window
4, 4 heads of 8, MLP hidden 64, the second block shifted by 2 with a -100 attention mask, final
LayerNorm, average pooling, a linear head to 10 classes: [2, 10].

Post-norm residuals: x = shortcut + norm1(attn(x)); x = x + norm2(mlp(x)).
Scaled cosine attention with logit_scale clamped at log(1 / 0.01) before exp, and the
continuous position bias 16 * sigmoid(cpb_mlp(log-spaced coordinate table)[index]).

Torch idioms on this side:
- root `SwinTransformerV2Tiny`: `patch_embed` (`PatchEmbed`: `proj` Conv2d, `norm` LayerNorm),
  `layers` = ModuleList holding ONE `BasicLayer` (whose `blocks` is a ModuleList), `norm`,
  `avgpool` (nn.AdaptiveAvgPool1d(1) on [B, C, L]), `head`.
- `SwinTransformerBlock` registers `norm1`, `attn`, `norm2`, `mlp`, and an `attn_mask` buffer
  (persistent, [4, 16, 16], built with the official img_mask slices; None, so not registered
  as a tensor, for the unshifted block); window_partition / window_reverse helper functions
  with view / permute; torch.roll.
- `WindowAttention`:
  - `logit_scale` parameter of shape [4, 1, 1], clamped with torch.clamp(max=log(100));
  - `cpb_mlp` = nn.Sequential(Linear(2, 64), ReLU, Linear(64, 4, bias=False)) evaluated on a
    [1, 7, 7, 2] `relative_coords_table` buffer, gathered with a `relative_position_index`
    buffer [16, 16] (both persistent: the official code registers them as plain buffers);
  - ONE packed `qkv` Linear(32, 96, bias=False) whose weight is used through
    F.linear(x, self.qkv.weight, cat(q_bias, zeros, v_bias)): the `qkv` module is never
    called; `q_bias` and `v_bias` are [32] parameters and k has no bias;
  - `softmax` = nn.Softmax(dim=-1) module, `proj` Linear.
- `Mlp`: `fc1`, `act` (nn.GELU()), `fc2`.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_qkv_bias_order    -> the packed bias is built as cat(q_bias, v_bias, zeros): k gets the
                             v bias and v gets none, in every block
  torch_unshift_wrong_way -> the shifted block rolls the merged windows back with
                             shifts=(-s, -s) (the same direction as the forward shift) instead of
                             (+s, +s)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

EMBED_DIM, NUM_HEADS, WINDOW_SIZE, SHIFT_SIZE, DEPTH = 32, 4, 4, 2, 2
MLP_RATIO, NUM_CLASSES, PATCH_SIZE, IN_CHANS, IMG_SIZE = 2.0, 10, 2, 3, 16
RESOLUTION = IMG_SIZE // PATCH_SIZE
BATCH = 2
OWN_BUGS = {"torch_qkv_bias_order", "torch_unshift_wrong_way"}
OTHER_BUGS = {"paddle_gelu_tanh", "paddle_logit_scale_no_clamp"}


def window_partition(x, window_size):
    B, H, W, C = x.shape
    x = x.view(B, H // window_size, window_size, W // window_size, window_size, C)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, window_size, window_size, C)


def window_reverse(windows, window_size, H, W):
    B = int(windows.shape[0] / (H * W / window_size / window_size))
    x = windows.view(B, H // window_size, W // window_size, window_size, window_size, -1)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(B, H, W, -1)


class Mlp(nn.Module):
    def __init__(self, in_features, hidden_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden_features, in_features)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class WindowAttention(nn.Module):
    def __init__(self, dim, window_size, num_heads, bias_order_bug=False):
        super().__init__()
        self.dim, self.window_size, self.num_heads = dim, window_size, num_heads
        self.bias_order_bug = bias_order_bug
        self.logit_scale = nn.Parameter(torch.log(10 * torch.ones((num_heads, 1, 1))), requires_grad=True)
        self.cpb_mlp = nn.Sequential(nn.Linear(2, 64, bias=True), nn.ReLU(inplace=True),
                                     nn.Linear(64, num_heads, bias=False))
        ws = window_size
        relative_coords_h = torch.arange(-(ws - 1), ws, dtype=torch.float32)
        relative_coords_w = torch.arange(-(ws - 1), ws, dtype=torch.float32)
        table = torch.stack(torch.meshgrid([relative_coords_h, relative_coords_w], indexing="ij"))
        table = table.permute(1, 2, 0).contiguous().unsqueeze(0)  # 1, 2ws-1, 2ws-1, 2
        table[:, :, :, 0] /= ws - 1
        table[:, :, :, 1] /= ws - 1
        table *= 8
        table = torch.sign(table) * torch.log2(torch.abs(table) + 1.0) / np.log2(8)
        self.register_buffer("relative_coords_table", table)
        coords = torch.stack(torch.meshgrid([torch.arange(ws), torch.arange(ws)], indexing="ij"))
        coords_flatten = torch.flatten(coords, 1)
        relative_coords = coords_flatten[:, :, None] - coords_flatten[:, None, :]
        relative_coords = relative_coords.permute(1, 2, 0).contiguous()
        relative_coords[:, :, 0] += ws - 1
        relative_coords[:, :, 1] += ws - 1
        relative_coords[:, :, 0] *= 2 * ws - 1
        self.register_buffer("relative_position_index", relative_coords.sum(-1))
        self.qkv = nn.Linear(dim, dim * 3, bias=False)
        self.q_bias = nn.Parameter(torch.zeros(dim))
        self.v_bias = nn.Parameter(torch.zeros(dim))
        self.proj = nn.Linear(dim, dim)
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x, mask=None):
        B_, N, C = x.shape
        zeros = torch.zeros_like(self.v_bias, requires_grad=False)
        if self.bias_order_bug:
            qkv_bias = torch.cat((self.q_bias, self.v_bias, zeros))
        else:
            qkv_bias = torch.cat((self.q_bias, zeros, self.v_bias))
        qkv = F.linear(input=x, weight=self.qkv.weight, bias=qkv_bias)
        qkv = qkv.reshape(B_, N, 3, self.num_heads, -1).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = F.normalize(q, dim=-1) @ F.normalize(k, dim=-1).transpose(-2, -1)
        logit_scale = torch.clamp(self.logit_scale, max=torch.log(torch.tensor(1.0 / 0.01))).exp()
        attn = attn * logit_scale
        table = self.cpb_mlp(self.relative_coords_table).view(-1, self.num_heads)
        bias = table[self.relative_position_index.view(-1)].view(N, N, -1).permute(2, 0, 1).contiguous()
        attn = attn + 16 * torch.sigmoid(bias).unsqueeze(0)
        if mask is not None:
            nW = mask.shape[0]
            attn = attn.view(B_ // nW, nW, self.num_heads, N, N) + mask.unsqueeze(1).unsqueeze(0)
            attn = attn.view(-1, self.num_heads, N, N)
        attn = self.softmax(attn)
        x = (attn @ v).transpose(1, 2).reshape(B_, N, C)
        return self.proj(x)


class SwinTransformerBlock(nn.Module):
    def __init__(self, dim, resolution, num_heads, window_size, shift_size, bias_order_bug=False,
                 unshift_bug=False):
        super().__init__()
        self.resolution, self.window_size, self.shift_size = resolution, window_size, shift_size
        self.unshift_bug = unshift_bug
        self.norm1 = nn.LayerNorm(dim)
        self.attn = WindowAttention(dim, window_size, num_heads, bias_order_bug)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, int(dim * MLP_RATIO))
        if shift_size > 0:
            H = W = resolution
            img_mask = torch.zeros((1, H, W, 1))
            slices = (slice(0, -window_size), slice(-window_size, -shift_size), slice(-shift_size, None))
            cnt = 0
            for h in slices:
                for w in slices:
                    img_mask[:, h, w, :] = cnt
                    cnt += 1
            mask_windows = window_partition(img_mask, window_size).view(-1, window_size * window_size)
            attn_mask = mask_windows.unsqueeze(1) - mask_windows.unsqueeze(2)
            attn_mask = attn_mask.masked_fill(attn_mask != 0, (-100.0)).masked_fill(attn_mask == 0, 0.0)
        else:
            attn_mask = None
        self.register_buffer("attn_mask", attn_mask)

    def forward(self, x):
        H = W = self.resolution
        B, _, C = x.shape
        shortcut = x
        x = x.view(B, H, W, C)
        if self.shift_size > 0:
            shifted_x = torch.roll(x, shifts=(-self.shift_size, -self.shift_size), dims=(1, 2))
        else:
            shifted_x = x
        x_windows = window_partition(shifted_x, self.window_size).view(-1, self.window_size * self.window_size, C)
        attn_windows = self.attn(x_windows, mask=self.attn_mask)
        attn_windows = attn_windows.view(-1, self.window_size, self.window_size, C)
        shifted_x = window_reverse(attn_windows, self.window_size, H, W)
        if self.shift_size > 0:
            back = -self.shift_size if self.unshift_bug else self.shift_size
            x = torch.roll(shifted_x, shifts=(back, back), dims=(1, 2))
        else:
            x = shifted_x
        x = x.view(B, H * W, C)
        x = shortcut + self.norm1(x)
        x = x + self.norm2(self.mlp(x))
        return x


class BasicLayer(nn.Module):
    def __init__(self, dim, resolution, depth, num_heads, window_size, **bugs):
        super().__init__()
        self.blocks = nn.ModuleList([
            SwinTransformerBlock(dim, resolution, num_heads, window_size,
                                 0 if (i % 2 == 0) else window_size // 2, **bugs)
            for i in range(depth)])

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return x


class PatchEmbed(nn.Module):
    def __init__(self, patch_size, in_chans, embed_dim):
        super().__init__()
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)
        self.norm = nn.LayerNorm(embed_dim)

    def forward(self, x):
        x = self.proj(x).flatten(2).transpose(1, 2)  # B Ph*Pw C
        return self.norm(x)


class SwinTransformerV2Tiny(nn.Module):
    def __init__(self, **bugs):
        super().__init__()
        self.patch_embed = PatchEmbed(PATCH_SIZE, IN_CHANS, EMBED_DIM)
        self.layers = nn.ModuleList([BasicLayer(EMBED_DIM, RESOLUTION, DEPTH, NUM_HEADS, WINDOW_SIZE, **bugs)])
        self.norm = nn.LayerNorm(EMBED_DIM)
        self.avgpool = nn.AdaptiveAvgPool1d(1)
        self.head = nn.Linear(EMBED_DIM, NUM_CLASSES)

    def forward(self, x):
        x = self.patch_embed(x)
        for layer in self.layers:
            x = layer(x)
        x = self.norm(x)
        x = self.avgpool(x.transpose(1, 2))
        x = torch.flatten(x, 1)
        return self.head(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_swinv2 torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = SwinTransformerV2Tiny(bias_order_bug=bug == "torch_qkv_bias_order",
                              unshift_bug=bug == "torch_unshift_wrong_way")
    return m.eval()


def _images():
    rng = np.random.default_rng(29)
    return rng.standard_normal((BATCH, IN_CHANS, IMG_SIZE, IMG_SIZE)).astype("float32")


def inputs():
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()
