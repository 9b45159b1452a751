"""Hand-written port, paddle side: a tiny DaViT (dual attention vision transformer), written by "person A".

Input: one positional image batch [2, 3, 32, 32] (NCHW, numpy rng seed 31, standard normal).
Output: logits [2, 10].

Architecture (both sides):
  stem        conv 7x7 stride 4 pad 3 (3 -> 16) + LayerNorm over channels -> 8 x 8 tokens
  stage 0     dim 16, 2 heads / groups of 8: one spatial block, then one channel block;
              spatial window 4 (2 x 2 windows of 16 tokens)
  downsample  LayerNorm(16) + conv 2x2 stride 2 (16 -> 32) -> 4 x 4 tokens
  stage 1     dim 32, 4 heads / groups of 8: spatial block (window 2, 2 x 2 windows of 4 tokens),
              channel block
  head        mean over tokens, LayerNorm(32), Linear(32, 10)
Every block:  x = cpe1(x); x = x + attn(norm1(x)); x = cpe2(x); x = x + mlp(norm2(x))
  cpe(x) = x + depthwise 3x3 conv(x as a map) (ConvPosEnc), MLP 4x with exact GELU,
  LayerNorm eps 1e-5 everywhere.
  spatial attention: multi-head self-attention inside each window, scale 8**-0.5.
  channel attention: per group of 8 channels, A = softmax(scale * q^T k) over the tokens
                     ([8 x 8] per group), out = (A v^T)^T, scale 8**-0.5.

Paddle idioms on this side:
- the model keeps tokens [B, N, C] throughout and passes (H, W) as plain ints.
- root `DaViT`: `patch_embed` (ConvStem: `proj` Conv2D, `norm` LayerNorm, returns tokens),
  `stages` = LayerList of LayerLists, stage i = [SpatialBlock, ChannelBlock] (`stages.0.0`,
  `stages.0.1`, ...), `downsamples` = LayerList with one `PatchMerging` (`norm`, `reduction`),
  then `norm` and `head`.
- `ConvPosEnc` is a layer of its own (`cpe1`, `cpe2` in each block), child `dw` Conv2D.
- window partition / reverse are module-level helpers (reshape + transpose), called inline in
  SpatialBlock.forward.
- spatial attention: SEPARATE `query`, `key`, `value` Linears and `out_proj`;
  channel attention: `q_proj` Linear(C, C) and a FUSED `kv_proj` Linear(C, 2C) ([k | v]), `out_proj`.
- MLP `ffn` with `fc1`, `fc2` and F.gelu inline.
- model() gives every norm / bias trained-looking seeded values (rng seed 7).

The torch side (port_davit_torch.py) was written independently (timm style).

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_window_rev_no_transpose -> window_reverse reshapes [B*nW, ws*ws, C] straight to
                                    [B, H, W, C] without transposing the window axes back
  paddle_cpe_reshape_no_transpose -> ConvPosEnc reshapes the tokens [B, N, C] straight to a
                                     [B, C, H, W] map (no transpose first)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IN_CH, NUM_CLASSES = 3, 10
DIMS, HEADS, WINDOWS = (16, 32), (2, 4), (4, 2)
MLP_RATIO, LN_EPS = 4, 1e-5
BATCH, IMG = 2, 32
OWN_BUGS = {"paddle_window_rev_no_transpose", "paddle_cpe_reshape_no_transpose"}
OTHER_BUGS = {"torch_shortcut_before_cpe", "torch_chan_softmax_bf16"}


def window_partition(x, H, W, ws):
    """tokens [B, H*W, C] -> windows [B * nW, ws*ws, C]."""
    B, _, C = x.shape
    x = x.reshape([B, H // ws, ws, W // ws, ws, C])
    x = x.transpose([0, 1, 3, 2, 4, 5])
    return x.reshape([-1, ws * ws, C])


def window_reverse(windows, H, W, ws, no_transpose=False):
    """windows [B * nW, ws*ws, C] -> tokens [B, H*W, C]."""
    C = windows.shape[-1]
    B = windows.shape[0] // ((H // ws) * (W // ws))
    if no_transpose:
        return windows.reshape([B, H * W, C])
    x = windows.reshape([B, H // ws, W // ws, ws, ws, C])
    x = x.transpose([0, 1, 3, 2, 4, 5])
    return x.reshape([B, H * W, C])


class ConvPosEnc(nn.Layer):
    def __init__(self, dim, no_transpose=False):
        super().__init__()
        self.no_transpose = no_transpose
        self.dw = nn.Conv2D(dim, dim, 3, padding=1, groups=dim)

    def forward(self, x, H, W):
        B, _N, C = x.shape
        if self.no_transpose:
            feat = x.reshape([B, C, H, W])
        else:
            feat = x.transpose([0, 2, 1]).reshape([B, C, H, W])
        feat = self.dw(feat).flatten(2).transpose([0, 2, 1])
        return x + feat


class FeedForward(nn.Layer):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim * MLP_RATIO)
        self.fc2 = nn.Linear(dim * MLP_RATIO, dim)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class WindowAttention(nn.Layer):
    def __init__(self, dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim ** -0.5
        self.query = nn.Linear(dim, dim)
        self.key = nn.Linear(dim, dim)
        self.value = nn.Linear(dim, dim)
        self.out_proj = nn.Linear(dim, dim)

    def _heads(self, t):
        b, n, _ = t.shape
        return t.reshape([b, n, self.num_heads, self.head_dim]).transpose([0, 2, 1, 3])

    def forward(self, x):
        b, n, c = x.shape
        q = self._heads(self.query(x)) * self.scale
        k = self._heads(self.key(x))
        v = self._heads(self.value(x))
        attn = F.softmax(paddle.matmul(q, k, transpose_y=True), axis=-1)
        out = paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([b, n, c])
        return self.out_proj(out)


class ChannelAttention(nn.Layer):
    def __init__(self, dim, num_groups):
        super().__init__()
        self.groups = num_groups
        self.group_dim = dim // num_groups
        self.scale = self.group_dim ** -0.5
        self.q_proj = nn.Linear(dim, dim)
        self.kv_proj = nn.Linear(dim, 2 * dim)
        self.out_proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        g, d = self.groups, self.group_dim
        q = self.q_proj(x).reshape([B, N, g, d]).transpose([0, 2, 3, 1])  # [B, g, d, N]
        kv = self.kv_proj(x).reshape([B, N, 2, g, d]).transpose([2, 0, 3, 4, 1])  # [2, B, g, d, N]
        k, v = kv[0], kv[1]
        attn = paddle.matmul(q * self.scale, k, transpose_y=True)  # [B, g, d, d]
        attn = F.softmax(attn, axis=-1)
        out = paddle.matmul(attn, v)  # [B, g, d, N]
        out = out.transpose([0, 3, 1, 2]).reshape([B, N, C])
        return self.out_proj(out)


class SpatialBlock(nn.Layer):
    def __init__(self, dim, num_heads, window, bug=""):
        super().__init__()
        self.window = window
        self.rev_no_transpose = bug == "paddle_window_rev_no_transpose"
        cpe_bug = bug == "paddle_cpe_reshape_no_transpose"
        self.cpe1 = ConvPosEnc(dim, cpe_bug)
        self.norm1 = nn.LayerNorm(dim, epsilon=LN_EPS)
        self.attn = WindowAttention(dim, num_heads)
        self.cpe2 = ConvPosEnc(dim, cpe_bug)
        self.norm2 = nn.LayerNorm(dim, epsilon=LN_EPS)
        self.ffn = FeedForward(dim)

    def forward(self, x, H, W):
        x = self.cpe1(x, H, W)
        windows = window_partition(self.norm1(x), H, W, self.window)
        windows = self.attn(windows)
        x = x + window_reverse(windows, H, W, self.window, self.rev_no_transpose)
        x = self.cpe2(x, H, W)
        return x + self.ffn(self.norm2(x))


class ChannelBlock(nn.Layer):
    def __init__(self, dim, num_groups, bug=""):
        super().__init__()
        cpe_bug = bug == "paddle_cpe_reshape_no_transpose"
        self.cpe1 = ConvPosEnc(dim, cpe_bug)
        self.norm1 = nn.LayerNorm(dim, epsilon=LN_EPS)
        self.attn = ChannelAttention(dim, num_groups)
        self.cpe2 = ConvPosEnc(dim, cpe_bug)
        self.norm2 = nn.LayerNorm(dim, epsilon=LN_EPS)
        self.ffn = FeedForward(dim)

    def forward(self, x, H, W):
        x = self.cpe1(x, H, W)
        x = x + self.attn(self.norm1(x))
        x = self.cpe2(x, H, W)
        return x + self.ffn(self.norm2(x))


class ConvStem(nn.Layer):
    def __init__(self, in_ch, dim):
        super().__init__()
        self.proj = nn.Conv2D(in_ch, dim, 7, stride=4, padding=3)
        self.norm = nn.LayerNorm(dim, epsilon=LN_EPS)

    def forward(self, img):
        return self.norm(self.proj(img).flatten(2).transpose([0, 2, 1]))


class PatchMerging(nn.Layer):
    def __init__(self, dim_in, dim_out):
        super().__init__()
        self.norm = nn.LayerNorm(dim_in, epsilon=LN_EPS)
        self.reduction = nn.Conv2D(dim_in, dim_out, 2, stride=2)

    def forward(self, x, H, W):
        B, _N, C = x.shape
        x = self.norm(x).transpose([0, 2, 1]).reshape([B, C, H, W])
        return self.reduction(x).flatten(2).transpose([0, 2, 1])


class DaViT(nn.Layer):
    def __init__(self, bug=""):
        super().__init__()
        self.patch_embed = ConvStem(IN_CH, DIMS[0])
        self.stages = nn.LayerList([
            nn.LayerList([SpatialBlock(d, h, w, bug), ChannelBlock(d, h, bug)])
            for d, h, w in zip(DIMS, HEADS, WINDOWS)
        ])
        self.downsamples = nn.LayerList([PatchMerging(DIMS[0], DIMS[1])])
        self.norm = nn.LayerNorm(DIMS[-1], epsilon=LN_EPS)
        self.head = nn.Linear(DIMS[-1], NUM_CLASSES)

    def forward(self, img):
        x = self.patch_embed(img)
        H = W = img.shape[-1] // 4
        for i, stage in enumerate(self.stages):
            if i > 0:
                x = self.downsamples[i - 1](x, H, W)
                H, W = H // 2, W // 2
            for block in stage:
                x = block(x, H, W)
        return self.head(self.norm(x.mean(axis=1)))


def _trained_look(m):
    rng = np.random.default_rng(7)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
        elif isinstance(layer, (nn.Linear, nn.Conv2D)) and layer.bias is not None:
            n = layer.bias.shape[0]
            layer.bias.set_value(rng.normal(0.0, 0.1, n).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_davit paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = DaViT(bug if bug in OWN_BUGS else "")
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(31)
    return rng.standard_normal((BATCH, IN_CH, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
