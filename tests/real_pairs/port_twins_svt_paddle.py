"""Hand-written port, paddle side: a tiny Twins-SVT image classifier (written by "person A", PaddleClas "ALTGVT" style).

Input: one positional image batch [2, 3, 32, 48] (NCHW, numpy rng seed 41, standard normal), a
NON-square image so that height / width mix-ups show. Output: class logits [2, 10].

Two stages, each: patch embedding (conv k = stride = patch, then LayerNorm), then two blocks,
a locally-grouped self-attention (LSA) block and a global sub-sampled attention (GSA) block,
with the positional encoding generator (PEG, depthwise 3x3 conv + residual, on the token map)
called right after the FIRST block of the stage:
  stage 0: patch 4 -> 8 x 12 tokens, width 16, 2 heads of 8, windows 4 x 4 (2 x 3 windows),
           GSA keys / values from a 2x2 stride-2 conv -> 4 x 6 tokens
  stage 1: patch 2 -> 4 x 6 tokens, width 32, 4 heads of 8, windows 2 x 2 (2 x 3 windows),
           GSA sr 2 -> 2 x 3 tokens
Blocks are pre-norm: x + attn(LN(x)), then x + MLP(LN(x)) with an exact (erf) GELU, MLP ratio 2.
All LayerNorms eps 1e-6. Head: final LayerNorm, mean over tokens, Linear(32, 10).

Paddle idioms on this side:
- root `ALTGVT`: `patch_embeds` (LayerList of PatchEmbed), `pos_block` (LayerList of PosCNN),
  `blocks` (LayerList of LayerLists of Block), `norm`, `head`; the stage loop is in the root
  forward (the PEG is called after block j == 0; the tokens are reshaped back to NCHW inline
  between stages).
- `PatchEmbed`: `proj` Conv2D, `norm` LayerNorm; returns (tokens, (H, W)).
- `Block(x, H, W)`: `norm1`, `attn`, `norm2`, `mlp`; `attn` is a GroupAttention (LSA) for
  block 0 and an Attention (GSA) for block 1 of each stage.
- `GroupAttention` (LSA): ONE fused `qkv` Linear(C, 3C) with columns [q | k | v] (head-major
  inside each part) and `proj`; windows by reshape [B, hg, ws, wg, ws, C] + transpose.
- `Attention` (GSA): `q` Linear(C, C), `kv` Linear(C, 2C) (columns [k | v]), `proj`, then `sr`
  Conv2D(C, C, 2, stride 2) and `norm` LayerNorm on the sub-sampled keys / values.
- `Mlp`: `fc1`, `fc2`; F.gelu inline (no activation module).
- `PosCNN`: `proj` = nn.Sequential(Conv2D(C, C, 3, padding 1, groups C)); the residual is added
  in its forward.
- model() gives every LayerNorm trained-looking weight / bias (U(0.6, 1.4) / N(0, 0.2)), every
  Linear / Conv bias N(0, 0.1) and the PEG kernels N(0, 0.25) (rng seed 43).

The torch side (port_twins_svt_torch.py) was written independently (timm-like names, but its own
module tree): stage modules that own their embedding, blocks and PEG, separate query / key /
value Linears with F.scaled_dot_product_attention in the LSA, an nn.MultiheadAttention inside
the GSA, and an nn.GELU module in the MLP.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_lsa_no_window_transpose -> GroupAttention reshapes [B, H, W, C] straight to
                                    [B, hg * wg, ws * ws, C] (and back) without the window
                                    transpose, so each "window" is ws * ws consecutive tokens in
                                    row-major order instead of a ws x ws square
  paddle_gelu_tanh               -> Mlp uses F.gelu(approximate=True) (tanh approximation)
                                    instead of the exact erf GELU (precision-level)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IMG_H, IMG_W, IN_CH, NUM_CLASSES = 32, 48, 3, 10
EMBED_DIMS, NUM_HEADS, PATCHES, WINDOWS, SR_RATIOS = (16, 32), (2, 4), (4, 2), (4, 2), (2, 2)
MLP_RATIO, LN_EPS = 2, 1e-6
BATCH = 2
OWN_BUGS = {"paddle_lsa_no_window_transpose", "paddle_gelu_tanh"}
OTHER_BUGS = {"torch_peg_no_residual", "torch_gsa_no_transpose"}


class PatchEmbed(nn.Layer):
    def __init__(self, in_chans, embed_dim, patch_size):
        super().__init__()
        self.proj = nn.Conv2D(in_chans, embed_dim, patch_size, stride=patch_size)
        self.norm = nn.LayerNorm(embed_dim, epsilon=LN_EPS)

    def forward(self, x):
        x = self.proj(x)
        h, w = x.shape[2], x.shape[3]
        x = x.flatten(2).transpose([0, 2, 1])
        return self.norm(x), (h, w)


class GroupAttention(nn.Layer):
    """Locally-grouped self-attention inside ws x ws windows."""

    def __init__(self, dim, num_heads, ws, no_window_transpose=False):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim**-0.5
        self.ws = ws
        self.no_window_transpose = no_window_transpose
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, H, W):
        B, N, C = x.shape
        ws = self.ws
        hg, wg = H // ws, W // ws
        x = x.reshape([B, hg, ws, wg, ws, C])
        if not self.no_window_transpose:
            x = x.transpose([0, 1, 3, 2, 4, 5])
        x = x.reshape([B, hg * wg, ws * ws, C])
        qkv = self.qkv(x).reshape([B, hg * wg, ws * ws, 3, self.num_heads, self.head_dim])
        qkv = qkv.transpose([3, 0, 1, 4, 2, 5])  # [3, B, G, heads, n, hd]
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = F.softmax(paddle.matmul(q, k, transpose_y=True) * self.scale, axis=-1)
        x = paddle.matmul(attn, v).transpose([0, 1, 3, 2, 4])  # [B, G, n, heads, hd]
        x = x.reshape([B, hg, wg, ws, ws, C])
        if not self.no_window_transpose:
            x = x.transpose([0, 1, 3, 2, 4, 5])
        x = x.reshape([B, N, C])
        return self.proj(x)


class Attention(nn.Layer):
    """Global sub-sampled attention: keys / values from a strided conv of the token map."""

    def __init__(self, dim, num_heads, sr_ratio):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim**-0.5
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, dim * 2)
        self.proj = nn.Linear(dim, dim)
        self.sr = nn.Conv2D(dim, dim, sr_ratio, stride=sr_ratio)
        self.norm = nn.LayerNorm(dim, epsilon=LN_EPS)

    def forward(self, x, H, W):
        B, N, C = x.shape
        q = self.q(x).reshape([B, N, self.num_heads, self.head_dim]).transpose([0, 2, 1, 3])
        x_ = x.transpose([0, 2, 1]).reshape([B, C, H, W])
        x_ = self.sr(x_).reshape([B, C, -1]).transpose([0, 2, 1])
        x_ = self.norm(x_)
        kv = self.kv(x_).reshape([B, -1, 2, self.num_heads, self.head_dim]).transpose([2, 0, 3, 1, 4])
        k, v = kv[0], kv[1]
        attn = F.softmax(paddle.matmul(q, k, transpose_y=True) * self.scale, axis=-1)
        x = paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([B, N, C])
        return self.proj(x)


class Mlp(nn.Layer):
    def __init__(self, dim, hidden, gelu_tanh=False):
        super().__init__()
        self.gelu_tanh = gelu_tanh
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x), approximate=self.gelu_tanh))


class Block(nn.Layer):
    def __init__(self, dim, attn, gelu_tanh=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, epsilon=LN_EPS)
        self.attn = attn
        self.norm2 = nn.LayerNorm(dim, epsilon=LN_EPS)
        self.mlp = Mlp(dim, dim * MLP_RATIO, gelu_tanh)

    def forward(self, x, H, W):
        x = x + self.attn(self.norm1(x), H, W)
        return x + self.mlp(self.norm2(x))


class PosCNN(nn.Layer):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Sequential(nn.Conv2D(dim, dim, 3, 1, 1, groups=dim))

    def forward(self, x, H, W):
        B, _N, C = x.shape
        feat = x.transpose([0, 2, 1]).reshape([B, C, H, W])
        x = self.proj(feat) + feat
        return x.flatten(2).transpose([0, 2, 1])


class ALTGVT(nn.Layer):
    def __init__(self, no_window_transpose=False, gelu_tanh=False):
        super().__init__()
        self.patch_embeds = nn.LayerList()
        self.pos_block = nn.LayerList()
        self.blocks = nn.LayerList()
        in_ch = IN_CH
        for i, dim in enumerate(EMBED_DIMS):
            self.patch_embeds.append(PatchEmbed(in_ch, dim, PATCHES[i]))
            self.pos_block.append(PosCNN(dim))
            self.blocks.append(nn.LayerList([
                Block(dim, GroupAttention(dim, NUM_HEADS[i], WINDOWS[i], no_window_transpose), gelu_tanh),
                Block(dim, Attention(dim, NUM_HEADS[i], SR_RATIOS[i]), gelu_tanh),
            ]))
            in_ch = dim
        self.norm = nn.LayerNorm(EMBED_DIMS[-1], epsilon=LN_EPS)
        self.head = nn.Linear(EMBED_DIMS[-1], NUM_CLASSES)

    def forward(self, x):
        B = x.shape[0]
        n_stages = len(self.blocks)
        for i in range(n_stages):
            x, (H, W) = self.patch_embeds[i](x)
            for j, blk in enumerate(self.blocks[i]):
                x = blk(x, H, W)
                if j == 0:
                    x = self.pos_block[i](x, H, W)
            if i < n_stages - 1:
                x = x.reshape([B, H, W, -1]).transpose([0, 3, 1, 2])
        x = self.norm(x).mean(axis=1)
        return self.head(x)


def _trained_look(m):
    rng = np.random.default_rng(43)
    for name, p in m.named_parameters():
        if name.endswith(".bias"):
            std = 0.2 if "norm" in name else 0.1
            p.set_value(rng.normal(0.0, std, p.shape).astype("float32"))
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            layer.weight.set_value(rng.uniform(0.6, 1.4, layer.weight.shape).astype("float32"))
        if isinstance(layer, PosCNN):
            w = layer.proj[0].weight
            w.set_value(rng.normal(0.0, 0.25, w.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_twins_svt paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = ALTGVT(no_window_transpose=bug == "paddle_lsa_no_window_transpose", gelu_tanh=bug == "paddle_gelu_tanh")
    _trained_look(m)
    m.eval()
    return m


def _images():
    return np.random.default_rng(41).standard_normal((BATCH, IN_CH, IMG_H, IMG_W)).astype("float32")


def inputs():
    return (paddle.to_tensor(_images()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()
