"""Hand-written port, paddle side: a tiny two-stage Pyramid Vision Transformer (written by "person A").

Input: one image batch x [2, 3, 64, 64] (positional, NCHW, numpy rng seed 41, standard normal).
Output: logits [2, 10].

Stage i (i = 1, 2):
  overlapping patch embedding: Conv2D (stage 1: 3 -> 16, 7x7, stride 4, padding 3 -> 16x16;
  stage 2: 16 -> 32, 3x3, stride 2, padding 1 -> 8x8), flatten to tokens, LayerNorm (eps 1e-5);
  + a learned positional embedding of the stage (256 x 16 / 64 x 32);
  2 pre-norm blocks: x = x + SRA(LN(x)); x = x + MLP(LN(x)) (block LayerNorms eps 1e-6);
  stage LayerNorm (eps 1e-6); stage 1's tokens go back to the [B, 16, 16, 16] grid for stage 2.
Spatial-reduction attention (SRA): queries from every token; keys / values from the token grid
reduced by a Conv2D(C, C, sr, stride sr) (sr = 4 in stage 1, 2 in stage 2: 16 kv tokens each),
then LayerNorm (eps 1e-5). Heads: 1 (stage 1), 2 (stage 2), head dim 16, scale 16 ** -0.5.
MLP: Linear(C, 2C) -> exact GELU -> Linear(2C, C). Head: mean of stage 2's tokens ->
Linear(32, 10).

Paddle idioms on this side (PaddleClas PVT style, flat root):
- root `PyramidVisionTransformer` registers `patch_embed1`, `patch_embed2` (OverlapPatchEmbed:
  `proj` Conv2D, `norm` LayerNorm), then the position parameters `pos_embed1` [1, 256, 16] and
  `pos_embed2` [1, 64, 32] (token layout, added inline in the root forward), then `block1`,
  `norm1`, `block2`, `norm2` (LayerList of Block + LayerNorm per stage), then `head`.
- `Attention` registers `q` Linear(C, C), `kv` Linear(C, 2C) (output columns [k | v], each
  head-major), `attn_drop` Dropout(0.0), `proj`, `proj_drop` Dropout(0.0), `sr` Conv2D, `norm`
  LayerNorm; the attention itself (matmul, softmax) is inline.
- `Mlp`: `fc1`, `act` (nn.GELU), `fc2`, `drop` Dropout(0.0).
- Linear weights are [in, out].
- model() gives every LayerNorm trained-looking weights / biases and the position embeddings a
  visible scale (seeded), so nothing is an identity.

The torch side (port_pvt_torch.py) was written independently: a ModuleList of stage modules
each owning its patch embedding, a GRID-layout position embedding [1, C, H, W], its blocks and
norm; the attention is an nn.MultiheadAttention with ONE packed in_proj [3C, C].

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_kv_heads_first -> Attention reshapes the kv output as [B, M, heads, 2, head_dim]
                           (heads before the k / v axis) instead of [B, M, 2, heads, head_dim];
                           identical with one head (stage 1), wrong in stage 2 (2 heads)
  paddle_gelu_tanh      -> Mlp is built with nn.GELU(approximate=True) (tanh approximation)
                           instead of the exact erf GELU, in every block
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

NUM_CLASSES = 10
BATCH = 2
IMG = 64
OWN_BUGS = {"paddle_kv_heads_first", "paddle_gelu_tanh"}
OTHER_BUGS = {"torch_sr_grid_no_transpose", "torch_residual_from_norm"}


class OverlapPatchEmbed(nn.Layer):
    def __init__(self, patch_size, stride, in_chans, embed_dim):
        super().__init__()
        self.proj = nn.Conv2D(in_chans, embed_dim, kernel_size=patch_size, stride=stride,
                              padding=patch_size // 2)
        self.norm = nn.LayerNorm(embed_dim)

    def forward(self, x):
        x = self.proj(x)
        _, _, H, W = x.shape
        x = x.flatten(2).transpose([0, 2, 1])
        x = self.norm(x)
        return x, H, W


class Attention(nn.Layer):
    def __init__(self, dim, num_heads, sr_ratio, kv_heads_first=False):
        super().__init__()
        self.dim, self.num_heads = dim, num_heads
        head_dim = dim // num_heads
        self.scale = head_dim**-0.5
        self.kv_heads_first = kv_heads_first
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, dim * 2)
        self.attn_drop = nn.Dropout(0.0)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(0.0)
        self.sr_ratio = sr_ratio
        self.sr = nn.Conv2D(dim, dim, kernel_size=sr_ratio, stride=sr_ratio)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x, H, W):
        B, N, C = x.shape
        hd = C // self.num_heads
        q = self.q(x).reshape([B, N, self.num_heads, hd]).transpose([0, 2, 1, 3])
        x_ = x.transpose([0, 2, 1]).reshape([B, C, H, W])
        x_ = self.sr(x_).reshape([B, C, -1]).transpose([0, 2, 1])
        x_ = self.norm(x_)
        if self.kv_heads_first:
            kv = self.kv(x_).reshape([B, -1, self.num_heads, 2, hd]).transpose([3, 0, 2, 1, 4])
        else:
            kv = self.kv(x_).reshape([B, -1, 2, self.num_heads, hd]).transpose([2, 0, 3, 1, 4])
        k, v = kv[0], kv[1]
        attn = paddle.matmul(q, k, transpose_y=True) * self.scale
        attn = F.softmax(attn, axis=-1)
        attn = self.attn_drop(attn)
        x = paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([B, N, C])
        x = self.proj(x)
        return self.proj_drop(x)


class Mlp(nn.Layer):
    def __init__(self, in_features, hidden_features, approximate=False):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = nn.GELU(approximate=approximate)
        self.fc2 = nn.Linear(hidden_features, in_features)
        self.drop = nn.Dropout(0.0)

    def forward(self, x):
        x = self.drop(self.act(self.fc1(x)))
        return self.drop(self.fc2(x))


class Block(nn.Layer):
    def __init__(self, dim, num_heads, sr_ratio, mlp_ratio=2, kv_heads_first=False, gelu_tanh=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, epsilon=1e-6)
        self.attn = Attention(dim, num_heads, sr_ratio, kv_heads_first=kv_heads_first)
        self.norm2 = nn.LayerNorm(dim, epsilon=1e-6)
        self.mlp = Mlp(dim, dim * mlp_ratio, approximate=gelu_tanh)

    def forward(self, x, H, W):
        x = x + self.attn(self.norm1(x), H, W)
        x = x + self.mlp(self.norm2(x))
        return x


class PyramidVisionTransformer(nn.Layer):
    def __init__(self, embed_dims=(16, 32), num_heads=(1, 2), sr_ratios=(4, 2), depths=(2, 2),
                 class_num=NUM_CLASSES, **block_kw):
        super().__init__()
        self.patch_embed1 = OverlapPatchEmbed(7, 4, 3, embed_dims[0])
        self.patch_embed2 = OverlapPatchEmbed(3, 2, embed_dims[0], embed_dims[1])
        n1, n2 = (IMG // 4) ** 2, (IMG // 8) ** 2
        zeros = nn.initializer.Constant(0.0)
        self.pos_embed1 = self.create_parameter([1, n1, embed_dims[0]], default_initializer=zeros)
        self.pos_embed2 = self.create_parameter([1, n2, embed_dims[1]], default_initializer=zeros)
        self.block1 = nn.LayerList(
            [Block(embed_dims[0], num_heads[0], sr_ratios[0], **block_kw) for _ in range(depths[0])])
        self.norm1 = nn.LayerNorm(embed_dims[0], epsilon=1e-6)
        self.block2 = nn.LayerList(
            [Block(embed_dims[1], num_heads[1], sr_ratios[1], **block_kw) for _ in range(depths[1])])
        self.norm2 = nn.LayerNorm(embed_dims[1], epsilon=1e-6)
        self.head = nn.Linear(embed_dims[1], class_num)

    def forward(self, x):
        B = x.shape[0]
        # stage 1
        x, H, W = self.patch_embed1(x)
        x = x + self.pos_embed1
        for blk in self.block1:
            x = blk(x, H, W)
        x = self.norm1(x)
        x = x.reshape([B, H, W, -1]).transpose([0, 3, 1, 2])
        # stage 2
        x, H, W = self.patch_embed2(x)
        x = x + self.pos_embed2
        for blk in self.block2:
            x = blk(x, H, W)
        x = self.norm2(x)
        return self.head(x.mean(axis=1))


def _trained_look(m):
    rng = np.random.default_rng(43)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
        elif isinstance(layer, nn.Linear):
            layer.bias.set_value(rng.normal(0.0, 0.05, layer.bias.shape).astype("float32"))
    for p in (m.pos_embed1, m.pos_embed2):
        p.set_value(rng.normal(0.0, 0.3, p.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_pvt paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = PyramidVisionTransformer(kv_heads_first=bug == "paddle_kv_heads_first",
                                 gelu_tanh=bug == "paddle_gelu_tanh")
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(41)
    return rng.standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
