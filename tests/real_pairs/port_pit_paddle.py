"""Hand-written port, paddle side: a tiny Pooling-based Vision Transformer (PiT) (written by "person A").

Input: images [2, 3, 32, 32] (positional, NCHW, numpy rng seed 31, standard normal). Output:
logits [2, 10].

  patch embed   conv 4x4 stride 4 (3 -> 16, bias) -> + a learned positional MAP [1, 16, 8, 8]
  tokens        flatten the map to 64 tokens, prepend the class token  -> [B, 65, 16]
  stage 0       2 pre-norm transformer blocks, width 16, 2 heads of 8, MLP 16 -> 32 -> 16
  pool          split off the class token; the 64 patch tokens are reshaped back to a map
                [B, 16, 8, 8] and go through a depthwise conv 3x3 stride 2 padding 1 with channel
                multiplier 2 (groups 16, 16 -> 32, bias) -> [B, 32, 4, 4] -> 16 tokens; the class
                token goes through a Linear(16, 32)                    -> [B, 17, 32]
  stage 1       2 blocks, width 32, 4 heads of 8, MLP 32 -> 64 -> 32
  head          LayerNorm on the class token -> Linear(32, 10)

Block: x = x + attn(norm1(x)); x = x + mlp(norm2(x)); LayerNorm eps 1e-6 everywhere (timm's
PiT); attention scale 1/sqrt(8); MLP activation exact (erf) GELU.

Paddle idioms on this side:
- root `PoolingViT`: `cls_token` [1, 1, 16] and `pos_embed` [1, 16, 8, 8] (create_parameter),
  `patch_embed` (a bare nn.Conv2D), `stages` (LayerList of `Stage`, each with a LayerList
  `blocks`), `pools` (a separate LayerList of `TokenPool`, run by the root BETWEEN the stages),
  `norm`, `head`. The class token is prepended ONCE in the root and the sequence stays a token
  tensor [B, 1 + HW, C] throughout.
- `TokenPool(tokens, h, w)`: splits the class token, reshapes the patch tokens to a map inline,
  `conv` (depthwise, multiplier 2), flattens back, `cls_fc` on the class token, concatenates;
  returns (tokens, h, w).
- `Attention`: separate `q_proj`, `k_proj`, `v_proj`, `out_proj` Linears ([in, out]), F.softmax.
- `Mlp`: `fc1`, `fc2`, with F.gelu inline.
- model() gives every LayerNorm trained-looking weights / biases and the class token / positional
  map trained-looking values (numpy rng seed 41).

The torch side (port_pit_torch.py) was written independently, timm pit.py style: a
`ConvEmbedding` module, an nn.Sequential of `Transformer` stages passing a (map, class tokens)
tuple, each stage after the first OWNING its `pool` (ConvHeadPooling: `conv`, `fc`) and doing
the map <-> token reshapes itself, one fused `qkv` Linear per attention and an nn.GELU module.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_norm2_eps   -> Block builds `norm2` (the pre-MLP LayerNorm) with epsilon 1e-3 (the
                        Keras LayerNormalization default) instead of 1e-6, in every block
                        (precision-level)
  paddle_pool_pad0   -> TokenPool builds its depthwise conv with padding=0 instead of
                        stride // 2 = 1: the pooled map is 3x3 (9 tokens) instead of 4x4
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

BATCH, IMG, PATCH, NUM_CLASSES = 2, 32, 4, 10
DIMS, HEADS, DEPTHS, MLP_RATIO = (16, 32), (2, 4), (2, 2), 2
LN_EPS = 1e-6
OWN_BUGS = {"paddle_norm2_eps", "paddle_pool_pad0"}
OTHER_BUGS = {"torch_qkv_heads_first", "torch_residual_from_norm"}


class Attention(nn.Layer):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.scale = self.head_dim**-0.5
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.out_proj = nn.Linear(dim, dim)

    def _split(self, x):
        b, n, _ = x.shape
        return x.reshape([b, n, self.heads, self.head_dim]).transpose([0, 2, 1, 3])

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self._split(self.q_proj(x)), self._split(self.k_proj(x)), self._split(self.v_proj(x))
        attn = F.softmax(paddle.matmul(q, k, transpose_y=True) * self.scale, axis=-1)
        o = paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([b, n, c])
        return self.out_proj(o)


class Mlp(nn.Layer):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Block(nn.Layer):
    def __init__(self, dim, heads, norm2_eps=LN_EPS):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, epsilon=LN_EPS)
        self.attn = Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim, epsilon=norm2_eps)
        self.mlp = Mlp(dim, dim * MLP_RATIO)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class Stage(nn.Layer):
    def __init__(self, dim, heads, depth, norm2_eps=LN_EPS):
        super().__init__()
        self.blocks = nn.LayerList([Block(dim, heads, norm2_eps) for _ in range(depth)])

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return x


class TokenPool(nn.Layer):
    def __init__(self, cin, cout, stride=2, pad0=False):
        super().__init__()
        self.conv = nn.Conv2D(cin, cout, stride + 1, stride=stride, padding=0 if pad0 else stride // 2,
                              groups=cin)
        self.cls_fc = nn.Linear(cin, cout)

    def forward(self, tokens, h, w):
        cls_tok, patches = tokens[:, :1], tokens[:, 1:]
        b, _, c = patches.shape
        fmap = patches.transpose([0, 2, 1]).reshape([b, c, h, w])
        fmap = self.conv(fmap)
        h, w = fmap.shape[2], fmap.shape[3]
        patches = fmap.flatten(2).transpose([0, 2, 1])
        return paddle.concat([self.cls_fc(cls_tok), patches], axis=1), h, w


class PoolingViT(nn.Layer):
    def __init__(self, norm2_eps=LN_EPS, pad0=False):
        super().__init__()
        side = IMG // PATCH
        self.cls_token = self.create_parameter([1, 1, DIMS[0]], default_initializer=nn.initializer.Constant(0.0))
        self.pos_embed = self.create_parameter([1, DIMS[0], side, side],
                                               default_initializer=nn.initializer.Constant(0.0))
        self.patch_embed = nn.Conv2D(3, DIMS[0], PATCH, stride=PATCH)
        self.stages = nn.LayerList([Stage(DIMS[i], HEADS[i], DEPTHS[i], norm2_eps) for i in range(2)])
        self.pools = nn.LayerList([TokenPool(DIMS[0], DIMS[1], 2, pad0)])
        self.norm = nn.LayerNorm(DIMS[1], epsilon=LN_EPS)
        self.head = nn.Linear(DIMS[1], NUM_CLASSES)

    def forward(self, x):
        x = self.patch_embed(x) + self.pos_embed
        b, _, h, w = x.shape
        tokens = x.flatten(2).transpose([0, 2, 1])
        tokens = paddle.concat([self.cls_token.expand([b, -1, -1]), tokens], axis=1)
        for i, stage in enumerate(self.stages):
            tokens = stage(tokens)
            if i < len(self.pools):
                tokens, h, w = self.pools[i](tokens, h, w)
        return self.head(self.norm(tokens[:, 0]))


def _trained_look(m):
    rng = np.random.default_rng(41)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.normal(1.0, 0.15, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.1, n).astype("float32"))
    m.cls_token.set_value(rng.normal(0.0, 0.5, m.cls_token.shape).astype("float32"))
    m.pos_embed.set_value(rng.normal(0.0, 0.5, m.pos_embed.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_pit paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = PoolingViT(norm2_eps=1e-3 if bug == "paddle_norm2_eps" else LN_EPS, pad0=bug == "paddle_pool_pad0")
    _trained_look(m)
    m.eval()
    return m


def _images():
    rng = np.random.default_rng(31)
    return rng.standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
