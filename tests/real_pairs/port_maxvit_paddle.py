"""Hand-written port, paddle side: a tiny MaxViT stage (written by "person A").

Input: one image-like feature map [2, 16, 8, 8] (positional, NCHW, numpy rng seed 31, standard
normal). Two MaxViT blocks of 16 channels; each block is
  MBConv        x = x + proj(SE(gelu(bn(dw3x3(gelu(bn(expand1x1(bn_pre(x)))))))))   (expansion 4)
  block attn    non-overlapping 4x4 windows: x = x + attn(ln(x)); x = x + mlp(ln(x))
  grid attn     a dilated 4x4 grid (tokens H/4 = 2 apart): same sub-block, own weights
Attention: 2 heads of 8, scores q.k / sqrt(8) + a learned relative position bias (one table of
(2*4-1)^2 = 49 rows x 2 heads per attention, Swin-style index (dh + 3) * 7 + (dw + 3)). The MLP
is 16 -> 64 -> 16 with exact GELU. SE: global mean -> 1x1 conv 64 -> 4 -> SiLU -> 1x1 conv 4 -> 64
-> sigmoid gate. BN epsilon 1e-3 (the TF MaxViT value), LayerNorm epsilon 1e-5. Output: the stage
output [2, 16, 8, 8] (NCHW).

Paddle idioms on this side:
- root `MaxViTStage`: `blocks` = LayerList of `MaxViTBlock` (iterated, never called as a whole).
- `MaxViTBlock`: `mbconv` (MBConv, NCHW), then the block converts to NHWC with an inline
  transpose, calls `block_attn` and `grid_attn` (both `PartitionAttention`, NHWC in / out), and
  transposes back.
- `PartitionAttention(mode)`: partitions INLINE with reshape + transpose (module-level helpers
  `window_partition` / `grid_partition` and their reverses, no modules), then `norm1`, `attn`,
  `norm2`, `mlp` (`Mlp`: `fc1`, `fc2`, F.gelu inline).
- `RelPosAttention`: creates its `relative_position_bias_table` [49, 2] FIRST (create_parameter),
  registers the int64 buffer `relative_position_index` [256], then SEPARATE `q_proj`, `k_proj`,
  `v_proj` Linears and `out_proj`; the bias gather and softmax are inline.
- `MBConv`: `norm` (pre-norm BN), `conv_pw` (1x1, no bias), `bn1`, `conv_dw` (depthwise 3x3, no
  bias), `bn2`, `se` (`SqueezeExcite`: `conv_reduce`, `conv_expand` 1x1 convs with F.silu /
  F.sigmoid inline), `conv_pwl` (1x1 with bias); GELU inline (F.gelu).
- model() gives every BN trained-looking affine weights / running statistics, every LayerNorm
  trained-looking weights / biases and the bias tables trained-looking values (seeded).

The torch side (port_maxvit_torch.py) was written independently (torchvision style): NCHW all the
way, partition / departition MODULES (Tensor.unfold for windows, F.unfold / F.fold with dilation
for the grid), a packed `qkv` Linear, the bias table as [heads, 7, 7], nn.Sequential MBConv and MLP
with their own activation modules, and an SE made of Linears.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_grid_as_window -> MaxViTBlock builds its `grid_attn` with mode="window" (copy-paste of
                           the block-attention line), so the "grid" sub-block attends within
                           local 4x4 windows again (with its own weights)
  paddle_bn_eps_default -> the MBConv BatchNorms are built with paddle's default epsilon 1e-5
                           instead of the TF MaxViT 1e-3 (precision-level)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

DIM, HEADS, PART, EXPAND, MLP_RATIO, SE_RD, DEPTH = 16, 2, 4, 4, 4, 4, 2
BN_EPS, LN_EPS = 1e-3, 1e-5
BATCH, SIZE = 2, 8
OWN_BUGS = {"paddle_grid_as_window", "paddle_bn_eps_default"}
OTHER_BUGS = {"torch_relpos_transposed", "torch_gelu_tanh"}


def window_partition(x, p):
    # x [B, H, W, C] -> [B * H/p * W/p, p*p, C]
    b, h, w, c = x.shape
    x = x.reshape([b, h // p, p, w // p, p, c]).transpose([0, 1, 3, 2, 4, 5])
    return x.reshape([-1, p * p, c])


def window_reverse(x, p, h, w):
    c = x.shape[-1]
    x = x.reshape([-1, h // p, w // p, p, p, c]).transpose([0, 1, 3, 2, 4, 5])
    return x.reshape([-1, h, w, c])


def grid_partition(x, g):
    # x [B, H, W, C]; token (a * H/g + i, b * W/g + j) goes to group (i, j), slot (a, b)
    b, h, w, c = x.shape
    x = x.reshape([b, g, h // g, g, w // g, c]).transpose([0, 2, 4, 1, 3, 5])
    return x.reshape([-1, g * g, c])


def grid_reverse(x, g, h, w):
    c = x.shape[-1]
    x = x.reshape([-1, h // g, w // g, g, g, c]).transpose([0, 3, 1, 4, 2, 5])
    return x.reshape([-1, h, w, c])


class RelPosAttention(nn.Layer):
    def __init__(self, dim, heads, part):
        super().__init__()
        self.heads, self.head_dim, self.part = heads, dim // heads, part
        self.scale = self.head_dim**-0.5
        self.relative_position_bias_table = self.create_parameter(
            [(2 * part - 1) ** 2, heads], default_initializer=nn.initializer.TruncatedNormal(std=0.02))
        coords = np.stack(np.meshgrid(np.arange(part), np.arange(part), indexing="ij")).reshape(2, -1)
        rel = coords[:, :, None] - coords[:, None, :]  # [2, p*p, p*p]
        index = (rel[0] + part - 1) * (2 * part - 1) + (rel[1] + part - 1)
        self.register_buffer("relative_position_index", paddle.to_tensor(index.reshape(-1).astype("int64")))
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.out_proj = nn.Linear(dim, dim)

    def forward(self, x):
        n, seq, c = x.shape
        q = self.q_proj(x).reshape([n, seq, self.heads, self.head_dim]).transpose([0, 2, 1, 3])
        k = self.k_proj(x).reshape([n, seq, self.heads, self.head_dim]).transpose([0, 2, 1, 3])
        v = self.v_proj(x).reshape([n, seq, self.heads, self.head_dim]).transpose([0, 2, 1, 3])
        attn = paddle.matmul(q * self.scale, k, transpose_y=True)
        bias = paddle.index_select(self.relative_position_bias_table, self.relative_position_index, axis=0)
        bias = bias.reshape([seq, seq, self.heads]).transpose([2, 0, 1])
        attn = F.softmax(attn + bias.unsqueeze(0), axis=-1)
        out = paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([n, seq, c])
        return self.out_proj(out)


class Mlp(nn.Layer):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class PartitionAttention(nn.Layer):
    def __init__(self, dim, heads, part, mode):
        super().__init__()
        self.mode, self.part = mode, part
        self.norm1 = nn.LayerNorm(dim, epsilon=LN_EPS)
        self.attn = RelPosAttention(dim, heads, part)
        self.norm2 = nn.LayerNorm(dim, epsilon=LN_EPS)
        self.mlp = Mlp(dim, dim * MLP_RATIO)

    def forward(self, x):
        _, h, w, _ = x.shape
        if self.mode == "window":
            t = window_partition(x, self.part)
        else:
            t = grid_partition(x, self.part)
        t = t + self.attn(self.norm1(t))
        t = t + self.mlp(self.norm2(t))
        if self.mode == "window":
            return window_reverse(t, self.part, h, w)
        return grid_reverse(t, self.part, h, w)


class SqueezeExcite(nn.Layer):
    def __init__(self, channels, rd):
        super().__init__()
        self.conv_reduce = nn.Conv2D(channels, rd, 1)
        self.conv_expand = nn.Conv2D(rd, channels, 1)

    def forward(self, x):
        s = x.mean(axis=[2, 3], keepdim=True)
        s = self.conv_expand(F.silu(self.conv_reduce(s)))
        return x * F.sigmoid(s)


class MBConv(nn.Layer):
    def __init__(self, dim, bn_eps):
        super().__init__()
        hidden = dim * EXPAND
        self.norm = nn.BatchNorm2D(dim, epsilon=bn_eps)
        self.conv_pw = nn.Conv2D(dim, hidden, 1, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(hidden, epsilon=bn_eps)
        self.conv_dw = nn.Conv2D(hidden, hidden, 3, padding=1, groups=hidden, bias_attr=False)
        self.bn2 = nn.BatchNorm2D(hidden, epsilon=bn_eps)
        self.se = SqueezeExcite(hidden, SE_RD)
        self.conv_pwl = nn.Conv2D(hidden, dim, 1)

    def forward(self, x):
        y = F.gelu(self.bn1(self.conv_pw(self.norm(x))))
        y = F.gelu(self.bn2(self.conv_dw(y)))
        y = self.conv_pwl(self.se(y))
        return x + y


class MaxViTBlock(nn.Layer):
    def __init__(self, dim, bn_eps, grid_mode):
        super().__init__()
        self.mbconv = MBConv(dim, bn_eps)
        self.block_attn = PartitionAttention(dim, HEADS, PART, mode="window")
        self.grid_attn = PartitionAttention(dim, HEADS, PART, mode=grid_mode)

    def forward(self, x):
        x = self.mbconv(x)
        x = x.transpose([0, 2, 3, 1])  # NHWC
        x = self.grid_attn(self.block_attn(x))
        return x.transpose([0, 3, 1, 2])


class MaxViTStage(nn.Layer):
    def __init__(self, bn_eps=BN_EPS, grid_mode="grid"):
        super().__init__()
        self.blocks = nn.LayerList([MaxViTBlock(DIM, bn_eps, grid_mode) for _ in range(DEPTH)])

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return x


def _trained_look(m):
    rng = np.random.default_rng(131)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, n).astype("float32"))
        elif isinstance(layer, nn.LayerNorm):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.normal(1.0, 0.15, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.1, n).astype("float32"))
        elif isinstance(layer, RelPosAttention):
            t = layer.relative_position_bias_table
            t.set_value(rng.normal(0.0, 0.6, t.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_maxvit paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = MaxViTStage(bn_eps=1e-5 if bug == "paddle_bn_eps_default" else BN_EPS,
                    grid_mode="window" if bug == "paddle_grid_as_window" else "grid")
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(31)
    return rng.standard_normal((BATCH, DIM, SIZE, SIZE)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # stage output [2, 16, 8, 8]
    return (output**2).mean()
