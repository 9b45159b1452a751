"""Hand-written port, paddle side: a tiny Swin Transformer (written by "person A").

PaddleClas-style code, written by hand. Sizes: 32x32 RGB images, 4x4 patches (an 8x8 token
grid), embedding width 16, 2 stages of 2 blocks (heads 2 then 4, head dim 8), windows of 4x4
tokens, MLP ratio 2, a patch merging between the stages (8x8x16 -> 4x4x32), 10 classes.
LayerNorm eps 1e-5 everywhere, exact (erf) GELU, eval mode, no dropout.

Paddle idioms on this side:
- `patch_embed` (`PatchEmbed`): a strided nn.Conv2D(3, 16, 4, stride 4) `proj` then a LayerNorm
  `norm`; the tokens are kept as [B, L, C] sequences between the blocks (each block knows its
  input resolution).
- `layers` = LayerList of `BasicLayer` (`blocks` LayerList, then `downsample` = PatchMerging for
  the first stage and None for the last): the merging sits at the END of stage 0.
- `SwinTransformerBlock`: `norm1`, `attn`, `norm2`, `mlp` (Mlp: fc1, act = nn.GELU, fc2).
  Every second block of a stage uses shifted windows (paddle.roll by -2 before the attention,
  +2 after), except where the stage's grid is no larger than a window (stage 1: 4x4 grid, one
  window, so Swin's rule turns the shift off). The shifted-window attention mask (-100 between
  regions) is precomputed as a non-persistable buffer `attn_mask` [nW, 16, 16] of the block.
- `WindowAttention`: ONE fused `qkv` Linear(C, 3C) (split q | k | v, heads of 8), `proj`, a
  `softmax` module (nn.Softmax), the `relative_position_bias_table` [(2*4-1)^2 = 49, heads]
  (create_parameter, TruncatedNormal std 0.02) and the precomputed non-persistable buffer
  `relative_position_index` [16, 16] (dh + 3) * 7 + (dw + 3); the bias is gathered with
  paddle.index_select on the flattened index.
- `PatchMerging`: the 2x2 neighbours concatenated in PaddleClas's order
  x0 = x[:, 0::2, 0::2], x1 = x[:, 1::2, 0::2], x2 = x[:, 0::2, 1::2], x3 = x[:, 1::2, 1::2]
  (row offset changes first), then `norm` LayerNorm(4C) and `reduction` Linear(4C, 2C, no bias).
- `norm` LayerNorm(32), `avgpool` nn.AdaptiveAvgPool1D(1) over the tokens, `head` Linear(32, 10).

The torch side (port_swin_torch.py) was written independently: unfold + Linear patch embedding,
[B, H, W, C] tokens, separate q / k / v, a [heads, 49] table, the merging at the START of
stage 1 with its neighbours in (row, column) raster order (its merge weights are this side's
rows permuted, see port_swin_hook.py).

PADIFF_BUG=paddle_rel_index_transposed plants this side's bug: the relative position index is
built with the two axes swapped, (dw + 3) * 7 + (dh + 3), in every WindowAttention.
"""
import os

import numpy as np
import paddle
from paddle import nn

IMG, PATCH, IN_CHANS, EMBED_DIM, DEPTHS, HEADS, WINDOW, MLP_RATIO, CLASSES = 32, 4, 3, 16, (2, 2), (2, 4), 4, 2, 10
BATCH = 2
OWN_BUGS = {"paddle_rel_index_transposed"}
OTHER_BUGS = {"shift_sign", "gelu_tanh"}


def window_partition(x, window_size):
    """[B, H, W, C] -> [B * nW, ws * ws, C]"""
    B, H, W, C = x.shape
    x = x.reshape([B, H // window_size, window_size, W // window_size, window_size, C])
    return x.transpose([0, 1, 3, 2, 4, 5]).reshape([-1, window_size * window_size, C])


def window_reverse(windows, window_size, H, W):
    """[B * nW, ws * ws, C] -> [B, H, W, C]"""
    C = windows.shape[-1]
    B = windows.shape[0] // ((H // window_size) * (W // window_size))
    x = windows.reshape([B, H // window_size, W // window_size, window_size, window_size, C])
    return x.transpose([0, 1, 3, 2, 4, 5]).reshape([B, H, W, C])


class Mlp(nn.Layer):
    def __init__(self, in_features, hidden_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden_features, in_features)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class WindowAttention(nn.Layer):
    def __init__(self, dim, window_size, num_heads, index_transposed=False):
        super().__init__()
        self.dim, self.window_size, self.num_heads = dim, window_size, num_heads
        head_dim = dim // num_heads
        self.scale = head_dim**-0.5
        self.relative_position_bias_table = self.create_parameter(
            shape=[(2 * window_size - 1) * (2 * window_size - 1), num_heads],
            default_initializer=nn.initializer.TruncatedNormal(std=0.02))
        coords_h = paddle.arange(window_size)
        coords_w = paddle.arange(window_size)
        coords = paddle.stack(paddle.meshgrid([coords_h, coords_w]))  # [2, ws, ws]
        coords_flatten = paddle.flatten(coords, 1)  # [2, N]
        relative_coords = coords_flatten.unsqueeze(-1) - coords_flatten.unsqueeze(1)  # [2, N, N]
        relative_coords = relative_coords.transpose([1, 2, 0])  # [N, N, 2]: (dh, dw)
        relative_coords = relative_coords + (window_size - 1)
        if index_transposed:  # the bug: the column offset is the major axis
            index = relative_coords[:, :, 1] * (2 * window_size - 1) + relative_coords[:, :, 0]
        else:
            index = relative_coords[:, :, 0] * (2 * window_size - 1) + relative_coords[:, :, 1]
        self.register_buffer("relative_position_index", index, persistable=False)
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.softmax = nn.Softmax(axis=-1)

    def forward(self, x, mask=None):
        B_, N, C = x.shape
        qkv = self.qkv(x).reshape([B_, N, 3, self.num_heads, C // self.num_heads]).transpose([2, 0, 3, 1, 4])
        q, k, v = qkv[0], qkv[1], qkv[2]
        q = q * self.scale
        attn = paddle.matmul(q, k, transpose_y=True)  # [B_, heads, N, N]
        bias = paddle.index_select(self.relative_position_bias_table,
                                   self.relative_position_index.reshape([-1]), axis=0)
        bias = bias.reshape([N, N, self.num_heads]).transpose([2, 0, 1])
        attn = attn + bias.unsqueeze(0)
        if mask is not None:
            nW = mask.shape[0]
            attn = attn.reshape([B_ // nW, nW, self.num_heads, N, N]) + mask.unsqueeze(1).unsqueeze(0)
            attn = attn.reshape([-1, self.num_heads, N, N])
        attn = self.softmax(attn)
        x = paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([B_, N, C])
        return self.proj(x)


class SwinTransformerBlock(nn.Layer):
    def __init__(self, dim, input_resolution, num_heads, window_size=WINDOW, shift_size=0, index_transposed=False):
        super().__init__()
        self.dim, self.input_resolution = dim, input_resolution
        self.window_size, self.shift_size = window_size, shift_size
        if min(input_resolution) <= window_size:  # Swin's rule: one window, no shift
            self.shift_size = 0
            self.window_size = min(input_resolution)
        self.norm1 = nn.LayerNorm(dim)
        self.attn = WindowAttention(dim, self.window_size, num_heads, index_transposed)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, dim * MLP_RATIO)
        if self.shift_size > 0:
            H, W = input_resolution
            img_mask = np.zeros((1, H, W, 1), dtype="float32")
            cnt = 0
            for h in (slice(0, -self.window_size), slice(-self.window_size, -self.shift_size),
                      slice(-self.shift_size, None)):
                for w in (slice(0, -self.window_size), slice(-self.window_size, -self.shift_size),
                          slice(-self.shift_size, None)):
                    img_mask[:, h, w, :] = cnt
                    cnt += 1
            mask_windows = window_partition(paddle.to_tensor(img_mask), self.window_size).squeeze(-1)
            attn_mask = mask_windows.unsqueeze(1) - mask_windows.unsqueeze(2)  # [nW, N, N]
            attn_mask = paddle.where(attn_mask != 0, paddle.full_like(attn_mask, -100.0),
                                     paddle.zeros_like(attn_mask))
            self.register_buffer("attn_mask", attn_mask, persistable=False)
        else:
            self.attn_mask = None

    def forward(self, x):
        H, W = self.input_resolution
        B, _L, C = x.shape
        shortcut = x
        x = self.norm1(x).reshape([B, H, W, C])
        if self.shift_size > 0:
            x = paddle.roll(x, shifts=(-self.shift_size, -self.shift_size), axis=(1, 2))
        x_windows = window_partition(x, self.window_size)
        attn_windows = self.attn(x_windows, mask=self.attn_mask)
        x = window_reverse(attn_windows, self.window_size, H, W)
        if self.shift_size > 0:
            x = paddle.roll(x, shifts=(self.shift_size, self.shift_size), axis=(1, 2))
        x = shortcut + x.reshape([B, H * W, C])
        return x + self.mlp(self.norm2(x))


class PatchMerging(nn.Layer):
    def __init__(self, input_resolution, dim):
        super().__init__()
        self.input_resolution, self.dim = input_resolution, dim
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias_attr=False)
        self.norm = nn.LayerNorm(4 * dim)

    def forward(self, x):
        H, W = self.input_resolution
        B, _L, C = x.shape
        x = x.reshape([B, H, W, C])
        x0 = x[:, 0::2, 0::2, :]
        x1 = x[:, 1::2, 0::2, :]
        x2 = x[:, 0::2, 1::2, :]
        x3 = x[:, 1::2, 1::2, :]
        x = paddle.concat([x0, x1, x2, x3], axis=-1).reshape([B, -1, 4 * C])
        return self.reduction(self.norm(x))


class BasicLayer(nn.Layer):
    def __init__(self, dim, input_resolution, depth, num_heads, downsample, index_transposed=False):
        super().__init__()
        self.blocks = nn.LayerList([
            SwinTransformerBlock(dim, input_resolution, num_heads,
                                 shift_size=0 if i % 2 == 0 else WINDOW // 2, index_transposed=index_transposed)
            for i in range(depth)])
        self.downsample = PatchMerging(input_resolution, dim) if downsample else None

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        if self.downsample is not None:
            x = self.downsample(x)
        return x


class PatchEmbed(nn.Layer):
    def __init__(self, patch_size=PATCH, in_chans=IN_CHANS, embed_dim=EMBED_DIM):
        super().__init__()
        self.proj = nn.Conv2D(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)
        self.norm = nn.LayerNorm(embed_dim)

    def forward(self, x):
        x = self.proj(x).flatten(2).transpose([0, 2, 1])  # [B, L, C]
        return self.norm(x)


class SwinTransformer(nn.Layer):
    def __init__(self, index_transposed=False):
        super().__init__()
        self.patch_embed = PatchEmbed()
        res = IMG // PATCH
        self.layers = nn.LayerList()
        for i, (depth, heads) in enumerate(zip(DEPTHS, HEADS)):
            r = res // (2**i)
            self.layers.append(BasicLayer(EMBED_DIM * 2**i, (r, r), depth, heads,
                                          downsample=i < len(DEPTHS) - 1, index_transposed=index_transposed))
        self.num_features = EMBED_DIM * 2 ** (len(DEPTHS) - 1)
        self.norm = nn.LayerNorm(self.num_features)
        self.avgpool = nn.AdaptiveAvgPool1D(1)
        self.head = nn.Linear(self.num_features, CLASSES)

    def forward(self, x):
        x = self.patch_embed(x)
        for layer in self.layers:
            x = layer(x)
        x = self.norm(x)  # [B, L, C]
        x = self.avgpool(x.transpose([0, 2, 1])).flatten(1)
        return self.head(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_swin paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = SwinTransformer(index_transposed=bug == "paddle_rel_index_transposed")
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(5)
    return rng.standard_normal((BATCH, IN_CHANS, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # logits [B, 10] through the head
    return (output**2).mean()
