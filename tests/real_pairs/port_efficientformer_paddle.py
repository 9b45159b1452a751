"""Hand-written port, paddle side: a tiny EfficientFormer (v1) image classifier (written by "person A").

Input: one positional image [1, 3, 32, 32] (NCHW, numpy rng seed 41, standard normal).
Output: class logits [1, 10], the average of a classifier head and a distillation head.

Architecture (shared by both sides):
- stem: conv3x3 s2 (3 -> 8) + BN + ReLU, conv3x3 s2 (8 -> 16) + BN + ReLU   -> [1, 16, 8, 8]
- stage 1: two Meta4D blocks of width 16                                    -> [1, 16, 8, 8]
- downsample: conv3x3 s2 (16 -> 32) + BN                                     -> [1, 32, 4, 4]
- stage 2: one Meta4D block of width 32, flatten to tokens [1, 16, 32], one Meta3D block
- final LayerNorm, mean over the 16 tokens, (head(x) + dist_head(x)) / 2, 10 classes.
Meta4D (x [B, C, H, W]):
    x = x + ls1[c] * (avgpool3x3(x) - x)       avg-pool stride 1, pad 1, padding NOT counted
    x = x + ls2[c] * BN(conv1x1(GELU(BN(conv1x1(x)))))     hidden 4 * C
Meta3D (x [B, N, C]):
    x = x + ls1 * attn(LN(x))     4 heads of 8, scale 8^-0.5, no mask
    x = x + ls2 * fc2(GELU(fc1(LN(x))))        hidden 4 * C
BN eps 1e-5, LayerNorm eps 1e-5, exact (erf) GELU.

Paddle idioms on this side (PaddleClas-like layout):
- root `EfficientFormer`: `patch_embed` (nn.Sequential of Conv2D / BatchNorm2D / ReLU, indices
  0..5), `network` (LayerList: `network.0` = nn.Sequential of two `Meta4D`, `network.1` =
  `Embedding` downsample (`proj` Conv2D, `norm` BatchNorm2D), `network.2` = nn.Sequential of
  `Meta4D`, `Flat`, `Meta3D`), `norm` (LayerNorm), `head`, `dist_head`.
- `Meta4D` registers `token_mixer` (a `Pooling` module: child `pool` = nn.AvgPool2D(3, 1, 1,
  exclusive=True), returns pool(x) - x), `mlp` (`Mlp4D`: `fc1`, `norm1`, `fc2`, `norm2`, with
  F.gelu inline), then the layer scales `layer_scale_1` / `layer_scale_2` as [C] parameters
  (create_parameter), broadcast inline with unsqueeze.
- `Flat` is a module (flatten(2) + transpose to [B, N, C]).
- `Meta3D`: `norm1`, `token_mixer` (`Attention`: ONE fused `qkv` Linear(32, 96), columns
  q | k | v, each head-major, then `proj`), `norm2`, `mlp` (`Mlp`: `fc1` / `fc2` Linears, F.gelu
  inline), `layer_scale_1` / `layer_scale_2` [C].
- model() gives BN affine weights / running statistics, LayerNorms, layer scales and all biases
  trained-looking (seeded) values.

The torch side (port_efficientformer_torch.py) was written independently in a timm-like layout:
a `Stem4` module, stages with `downsample` / `blocks_4d` / `blocks_3d`, the pool subtraction
inline in the block, an nn.Sequential conv MLP, LayerScale modules with [C, 1, 1] gammas, separate
q / k / v Linears, a Conv1d (kernel 1) token MLP, and the flatten inline in the stage.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_pool_no_subtract -> the `Pooling` token mixer returns pool(x) instead of pool(x) - x
                             (the PoolFormer subtraction is forgotten), in every Meta4D block
  paddle_downsample_bn_eps -> the downsample `Embedding` builds its BatchNorm2D with
                             epsilon=1e-3 instead of 1e-5 (precision-level)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IN_CHANS, STEM_MID, WIDTHS, DEPTHS_4D, NUM_VIT = 3, 8, (16, 32), (2, 1), 1
HEADS, MLP_RATIO, NUM_CLASSES = 4, 4, 10
BN_EPS, LN_EPS = 1e-5, 1e-5
IMG, BATCH = 32, 1
OWN_BUGS = {"paddle_pool_no_subtract", "paddle_downsample_bn_eps"}
OTHER_BUGS = {"torch_pool_count_pad", "torch_softmax_query_axis"}


class Pooling(nn.Layer):
    def __init__(self, pool_size=3, subtract=True):
        super().__init__()
        self.subtract = subtract
        self.pool = nn.AvgPool2D(pool_size, stride=1, padding=pool_size // 2, exclusive=True)

    def forward(self, x):
        if self.subtract:
            return self.pool(x) - x
        return self.pool(x)


class Mlp4D(nn.Layer):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Conv2D(dim, hidden, 1)
        self.norm1 = nn.BatchNorm2D(hidden, epsilon=BN_EPS)
        self.fc2 = nn.Conv2D(hidden, dim, 1)
        self.norm2 = nn.BatchNorm2D(dim, epsilon=BN_EPS)

    def forward(self, x):
        x = F.gelu(self.norm1(self.fc1(x)))
        return self.norm2(self.fc2(x))


class Meta4D(nn.Layer):
    def __init__(self, dim, subtract=True):
        super().__init__()
        self.token_mixer = Pooling(3, subtract)
        self.mlp = Mlp4D(dim, dim * MLP_RATIO)
        init = nn.initializer.Constant(1e-5)
        self.layer_scale_1 = self.create_parameter([dim], default_initializer=init)
        self.layer_scale_2 = self.create_parameter([dim], default_initializer=init)

    def forward(self, x):
        x = x + self.layer_scale_1.unsqueeze(-1).unsqueeze(-1) * self.token_mixer(x)
        x = x + self.layer_scale_2.unsqueeze(-1).unsqueeze(-1) * self.mlp(x)
        return x


class Flat(nn.Layer):
    def forward(self, x):
        return x.flatten(2).transpose([0, 2, 1])


class Attention(nn.Layer):
    def __init__(self, dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim**-0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape([b, n, 3, self.num_heads, self.head_dim]).transpose([2, 0, 3, 1, 4])
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = paddle.matmul(q, k, transpose_y=True) * self.scale
        attn = F.softmax(attn, axis=-1)
        x = paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([b, n, c])
        return self.proj(x)


class Mlp(nn.Layer):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Meta3D(nn.Layer):
    def __init__(self, dim):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, epsilon=LN_EPS)
        self.token_mixer = Attention(dim, HEADS)
        self.norm2 = nn.LayerNorm(dim, epsilon=LN_EPS)
        self.mlp = Mlp(dim, dim * MLP_RATIO)
        init = nn.initializer.Constant(1e-5)
        self.layer_scale_1 = self.create_parameter([dim], default_initializer=init)
        self.layer_scale_2 = self.create_parameter([dim], default_initializer=init)

    def forward(self, x):
        x = x + self.layer_scale_1 * self.token_mixer(self.norm1(x))
        x = x + self.layer_scale_2 * self.mlp(self.norm2(x))
        return x


class Embedding(nn.Layer):
    """Downsampling between stages: conv3x3 stride 2 + BN."""

    def __init__(self, in_chans, embed_dim, bn_eps=BN_EPS):
        super().__init__()
        self.proj = nn.Conv2D(in_chans, embed_dim, 3, stride=2, padding=1)
        self.norm = nn.BatchNorm2D(embed_dim, epsilon=bn_eps)

    def forward(self, x):
        return self.norm(self.proj(x))


class EfficientFormer(nn.Layer):
    def __init__(self, subtract=True, down_bn_eps=BN_EPS):
        super().__init__()
        self.patch_embed = nn.Sequential(
            nn.Conv2D(IN_CHANS, STEM_MID, 3, stride=2, padding=1),
            nn.BatchNorm2D(STEM_MID, epsilon=BN_EPS),
            nn.ReLU(),
            nn.Conv2D(STEM_MID, WIDTHS[0], 3, stride=2, padding=1),
            nn.BatchNorm2D(WIDTHS[0], epsilon=BN_EPS),
            nn.ReLU(),
        )
        stage1 = nn.Sequential(*[Meta4D(WIDTHS[0], subtract) for _ in range(DEPTHS_4D[0])])
        down = Embedding(WIDTHS[0], WIDTHS[1], down_bn_eps)
        stage2 = nn.Sequential(*[Meta4D(WIDTHS[1], subtract) for _ in range(DEPTHS_4D[1])], Flat(),
                               *[Meta3D(WIDTHS[1]) for _ in range(NUM_VIT)])
        self.network = nn.LayerList([stage1, down, stage2])
        self.norm = nn.LayerNorm(WIDTHS[1], epsilon=LN_EPS)
        self.head = nn.Linear(WIDTHS[1], NUM_CLASSES)
        self.dist_head = nn.Linear(WIDTHS[1], NUM_CLASSES)

    def forward(self, x):
        x = self.patch_embed(x)
        for block in self.network:
            x = block(x)
        x = self.norm(x)
        x = x.mean(1)
        return (self.head(x) + self.dist_head(x)) / 2


def _trained_look(m):
    rng = np.random.default_rng(43)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, c).astype("float32"))
        elif isinstance(layer, nn.LayerNorm):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.7, 1.3, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.1, c).astype("float32"))
        elif isinstance(layer, (nn.Conv2D, nn.Linear)) and layer.bias is not None:
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))
        if isinstance(layer, (Meta4D, Meta3D)):
            for p in (layer.layer_scale_1, layer.layer_scale_2):
                p.set_value(rng.uniform(0.2, 0.8, p.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_efficientformer paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = EfficientFormer(subtract=bug != "paddle_pool_no_subtract",
                        down_bn_eps=1e-3 if bug == "paddle_downsample_bn_eps" else BN_EPS)
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(41)
    return rng.standard_normal((BATCH, IN_CHANS, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # class logits [1, 10]
    return (output**2).mean()
