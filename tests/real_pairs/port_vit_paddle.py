"""Hand-written port, paddle side: a tiny Vision Transformer written the way a Paddle user
would write it (the "original" model). Tiny: 32x32 images, 8x8 patches (16 patches + a class
token), width 32, 4 heads, 3 pre-norm blocks, MLP 64, 10 classes.

Paddle idioms on this side: a `PatchEmbed` layer around a strided `nn.Conv2D`, `cls_token` /
`pos_embed` created with `create_parameter` on the root, a `LayerList` of blocks, the built-in
`paddle.nn.MultiHeadAttention` (separate q_proj / k_proj / v_proj / out_proj, weights [in, out]),
the MLP as an `nn.Sequential(Linear, GELU, Linear)`, LayerNorm epsilon 1e-6 everywhere.

PADIFF_BUG=paddle_gelu_tanh plants this side's bug (see port_vit_truth.json).
"""
import os

import numpy as np
import paddle
from paddle import nn

IMG, PATCH, DIM, HEADS, DEPTH, MLP, CLASSES = 32, 8, 32, 4, 3, 64, 10


class PatchEmbed(nn.Layer):
    def __init__(self, in_chans=3, embed_dim=DIM, patch_size=PATCH):
        super().__init__()
        self.proj = nn.Conv2D(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x):
        x = self.proj(x)  # [B, D, H/p, W/p]
        return x.flatten(2).transpose([0, 2, 1])  # [B, N, D]


class Block(nn.Layer):
    def __init__(self, dim=DIM, num_heads=HEADS, mlp_dim=MLP):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, epsilon=1e-6)
        self.attn = nn.MultiHeadAttention(dim, num_heads, dropout=0.0)
        self.norm2 = nn.LayerNorm(dim, epsilon=1e-6)
        self.mlp = nn.Sequential(nn.Linear(dim, mlp_dim), nn.GELU(), nn.Linear(mlp_dim, dim))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h)
        x = x + self.mlp(self.norm2(x))
        return x


class VisionTransformer(nn.Layer):
    def __init__(self, num_classes=CLASSES, depth=DEPTH):
        super().__init__()
        self.patch_embed = PatchEmbed()
        num_patches = (IMG // PATCH) ** 2
        self.cls_token = self.create_parameter(
            [1, 1, DIM], default_initializer=nn.initializer.TruncatedNormal(std=0.5))
        self.pos_embed = self.create_parameter(
            [1, num_patches + 1, DIM], default_initializer=nn.initializer.TruncatedNormal(std=0.2))
        self.blocks = nn.LayerList([Block() for _ in range(depth)])
        self.norm = nn.LayerNorm(DIM, epsilon=1e-6)
        self.head = nn.Linear(DIM, num_classes)

    def forward(self, x):
        x = self.patch_embed(x)
        cls = self.cls_token.expand([x.shape[0], -1, -1])
        x = paddle.concat([cls, x], axis=1) + self.pos_embed
        for blk in self.blocks:
            x = blk(x)
        x = self.norm(x)
        return self.head(x[:, 0])


def model():
    paddle.seed(0)
    m = VisionTransformer()
    m.eval()
    _perturb(m)
    if os.environ.get("PADIFF_BUG", "") == "paddle_gelu_tanh":
        # the tanh approximation of GELU ("gelu_new") in the last block's MLP instead of the exact erf GELU
        m.blocks[2].mlp[1] = nn.GELU(approximate=True)
    return m


def _perturb(m):
    """Random init leaves every bias 0 and every LayerNorm at (1, 0): give them random values
    (fixed numpy rng) so that a bias or norm parameter ported wrongly shows."""
    rng = np.random.default_rng(1)
    for name, p in m.named_parameters():
        if name.endswith(".bias"):
            p.set_value(rng.normal(0.0, 0.05, p.shape).astype("float32"))
        elif "norm" in name and name.endswith(".weight"):
            p.set_value((1.0 + rng.normal(0.0, 0.1, p.shape)).astype("float32"))


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, IMG, IMG)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    # logits [2, 10] of a Linear on the final-LayerNormed class token: a mean of squares depends on all of it
    return (output**2).mean()
