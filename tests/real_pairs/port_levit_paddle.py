"""Hand-written port, paddle side: a tiny LeViT (written by "person A").

Written after the facebookresearch LeViT code, by hand. Sizes: 32x32 RGB images, a conv stem
of two 3x3 stride-2 Conv+BN (3 -> 8 -> 16, hardswish between them) giving an 8x8 token grid of
width 16, then on [B, N, C] tokens:
  stage 1 (8x8, width 16):  residual attention (2 heads, key dim 4, value dim 8), residual MLP
                            (16 -> 32 -> 16)
  shrink (8x8 -> 4x4):      shrinking attention, queries subsampled with stride 2 (4 heads, key
                            dim 4, value dim 16, 16 -> 24 wide, NO residual), residual MLP
                            (24 -> 48 -> 24)
  stage 2 (4x4, width 24):  residual attention (3 heads, key dim 4, value dim 8), residual MLP
then the mean over the tokens, BatchNorm1D + Linear(24, 10): logits [2, 10].

Every projection is LeViT's Linear_BN: a Linear without bias followed by a BatchNorm1D applied
over all tokens (x.flatten(0, 1), then reshaped back). Attention:
  scores = q k^T * key_dim^-0.5 + attention_biases[head, idx[i, j]]
where idx[i, j] numbers the offset (|dy|, |dx|) between query i and key j (a dict filled in
order of first appearance, as in LeViT); softmax; then hardswish and the output Linear_BN.
In the shrinking attention, query i sits at (stride * qy, stride * qx) on the key grid.

Paddle idioms on this side:
- root `LeViT`: `patch_embed` = nn.Sequential(Conv2dBN, nn.Hardswish, Conv2dBN) (Conv2dBN is an
  nn.Sequential with sublayers `c`, `bn`); `blocks` = ONE flat nn.Sequential of 6 entries:
  Residual(Attention), Residual(mlp), AttentionSubsample, Residual(mlp), Residual(Attention),
  Residual(mlp) (`Residual` holds `m`; mlp = nn.Sequential(LinearBN, nn.Hardswish, LinearBN));
  `head` = BNLinear, an nn.Sequential with `bn` (BatchNorm1D) and `l` (Linear).
- `LinearBN`: nn.Sequential with `c` (Linear, no bias) and `bn` (BatchNorm1D), applied over
  tokens with flatten(0, 1).
- `Attention`: ONE fused `qkv` LinearBN whose output columns are laid out head by head,
  [h0: q(4) k(4) v(8)][h1: ...], split after a reshape to [B, N, heads, 16]; `proj` =
  nn.Sequential(nn.Hardswish, LinearBN); then the table `attention_biases` [heads, 64]
  (create_parameter) and the persistable buffer `attention_bias_idxs` [N, N] (int64), gathered
  with paddle.index_select.
- `AttentionSubsample`: fused `kv` LinearBN (head by head, [h: k(4) v(16)]), `q` =
  nn.Sequential(Subsample, LinearBN) (the query tokens are picked by the `Subsample` module),
  `proj`, the table [4, 64] and the buffer [16, 64].
- model() gives every BatchNorm trained-looking affine weights / running statistics and the bias
  tables trained-looking values (seeded), so that nothing is an identity.

The torch side (port_levit_torch.py) was written independently (timm-like): a stem module with
inline hardswish, separate q / k / v projections, a fused k | v in block layout, [64, heads]
tables, inline residuals and inline query subsampling (see port_levit_hook.py).

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_sub_bias_no_stride -> the shrinking attention builds its offset index from the query
                               position (qy, qx) itself instead of (2 qy, 2 qx) on the key grid
  paddle_stem_bn_eps        -> the first stem BatchNorm2D is built with epsilon=1e-3 (Keras
                               default) instead of 1e-5 (precision-level)
"""
import itertools
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IMG, N_CLASSES, BATCH = 32, 10, 2
OWN_BUGS = {"paddle_sub_bias_no_stride", "paddle_stem_bn_eps"}
OTHER_BUGS = {"torch_scale_uses_dv", "torch_subsample_offset"}


class Conv2dBN(nn.Sequential):
    def __init__(self, a, b, ks=3, stride=2, pad=1, eps=1e-5):
        super().__init__()
        self.add_sublayer("c", nn.Conv2D(a, b, ks, stride, pad, bias_attr=False))
        self.add_sublayer("bn", nn.BatchNorm2D(b, epsilon=eps))


class LinearBN(nn.Sequential):
    def __init__(self, a, b):
        super().__init__()
        self.add_sublayer("c", nn.Linear(a, b, bias_attr=False))
        self.add_sublayer("bn", nn.BatchNorm1D(b))

    def forward(self, x):
        x = self.c(x)
        return self.bn(x.flatten(0, 1)).reshape(x.shape)


class BNLinear(nn.Sequential):
    def __init__(self, a, b):
        super().__init__()
        self.add_sublayer("bn", nn.BatchNorm1D(a))
        self.add_sublayer("l", nn.Linear(a, b))


class Residual(nn.Layer):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return x + self.m(x)


class Subsample(nn.Layer):
    def __init__(self, stride, resolution):
        super().__init__()
        self.stride, self.resolution = stride, resolution

    def forward(self, x):
        B, _, C = x.shape
        x = x.reshape([B, self.resolution, self.resolution, C])[:, :: self.stride, :: self.stride]
        return x.reshape([B, -1, C])


def _mlp(dim, hidden):
    return Residual(nn.Sequential(LinearBN(dim, hidden), nn.Hardswish(), LinearBN(hidden, dim)))


class Attention(nn.Layer):
    def __init__(self, dim, key_dim, num_heads, attn_ratio, resolution):
        super().__init__()
        self.num_heads, self.key_dim = num_heads, key_dim
        self.scale = key_dim**-0.5
        self.d = int(attn_ratio * key_dim)
        self.dh = self.d * num_heads
        self.qkv = LinearBN(dim, self.dh + 2 * key_dim * num_heads)
        self.proj = nn.Sequential(nn.Hardswish(), LinearBN(self.dh, dim))
        points = list(itertools.product(range(resolution), range(resolution)))
        offsets, idxs = {}, []
        for p1 in points:
            for p2 in points:
                off = (abs(p1[0] - p2[0]), abs(p1[1] - p2[1]))
                if off not in offsets:
                    offsets[off] = len(offsets)
                idxs.append(offsets[off])
        n = len(points)
        self.attention_biases = self.create_parameter(
            [num_heads, len(offsets)], default_initializer=nn.initializer.Constant(0.0))
        self.register_buffer("attention_bias_idxs", paddle.to_tensor(np.array(idxs, "int64").reshape(n, n)))

    def forward(self, x):
        B, N, _ = x.shape
        qkv = self.qkv(x).reshape([B, N, self.num_heads, -1])
        q, k, v = paddle.split(qkv, [self.key_dim, self.key_dim, self.d], axis=3)
        q, k, v = (t.transpose([0, 2, 1, 3]) for t in (q, k, v))
        bias = paddle.index_select(self.attention_biases, self.attention_bias_idxs.flatten(), axis=1)
        attn = paddle.matmul(q, k, transpose_y=True) * self.scale + bias.reshape([self.num_heads, N, N])
        attn = F.softmax(attn, axis=-1)
        x = paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([B, N, self.dh])
        return self.proj(x)


class AttentionSubsample(nn.Layer):
    def __init__(self, in_dim, out_dim, key_dim, num_heads, attn_ratio, stride, resolution, resolution_,
                 no_stride_bias=False):
        super().__init__()
        self.num_heads, self.key_dim = num_heads, key_dim
        self.scale = key_dim**-0.5
        self.d = int(attn_ratio * key_dim)
        self.dh = self.d * num_heads
        self.resolution_ = resolution_
        self.kv = LinearBN(in_dim, self.dh + key_dim * num_heads)
        self.q = nn.Sequential(Subsample(stride, resolution), LinearBN(in_dim, key_dim * num_heads))
        self.proj = nn.Sequential(nn.Hardswish(), LinearBN(self.dh, out_dim))
        points = list(itertools.product(range(resolution), range(resolution)))
        points_ = list(itertools.product(range(resolution_), range(resolution_)))
        s = 1 if no_stride_bias else stride
        offsets, idxs = {}, []
        for p1 in points_:
            for p2 in points:
                off = (abs(p1[0] * s - p2[0]), abs(p1[1] * s - p2[1]))
                if off not in offsets:
                    offsets[off] = len(offsets)
                idxs.append(offsets[off])
        self.attention_biases = self.create_parameter(
            [num_heads, len(offsets)], default_initializer=nn.initializer.Constant(0.0))
        self.register_buffer(
            "attention_bias_idxs", paddle.to_tensor(np.array(idxs, "int64").reshape(len(points_), len(points))))

    def forward(self, x):
        B, N, _ = x.shape
        n_ = self.resolution_**2
        kv = self.kv(x).reshape([B, N, self.num_heads, -1])
        k, v = paddle.split(kv, [self.key_dim, self.d], axis=3)
        k, v = k.transpose([0, 2, 1, 3]), v.transpose([0, 2, 1, 3])
        q = self.q(x).reshape([B, n_, self.num_heads, self.key_dim]).transpose([0, 2, 1, 3])
        bias = paddle.index_select(self.attention_biases, self.attention_bias_idxs.flatten(), axis=1)
        attn = paddle.matmul(q, k, transpose_y=True) * self.scale + bias.reshape([self.num_heads, n_, N])
        attn = F.softmax(attn, axis=-1)
        x = paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([B, n_, self.dh])
        return self.proj(x)


class LeViT(nn.Layer):
    def __init__(self, stem_eps=1e-5, no_stride_bias=False):
        super().__init__()
        self.patch_embed = nn.Sequential(Conv2dBN(3, 8, eps=stem_eps), nn.Hardswish(), Conv2dBN(8, 16))
        self.blocks = nn.Sequential(
            Residual(Attention(16, 4, 2, 2, 8)),
            _mlp(16, 32),
            AttentionSubsample(16, 24, 4, 4, 4, 2, 8, 4, no_stride_bias=no_stride_bias),
            _mlp(24, 48),
            Residual(Attention(24, 4, 3, 2, 4)),
            _mlp(24, 48),
        )
        self.head = BNLinear(24, N_CLASSES)

    def forward(self, x):
        x = self.patch_embed(x)
        x = x.flatten(2).transpose([0, 2, 1])
        x = self.blocks(x)
        return self.head(x.mean(1))


def _trained_look(m):
    rng = np.random.default_rng(23)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, (nn.BatchNorm1D, nn.BatchNorm2D)):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, c).astype("float32"))
        if isinstance(layer, (Attention, AttentionSubsample)):
            ab = layer.attention_biases
            ab.set_value(rng.normal(0.0, 0.5, ab.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_levit paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = LeViT(stem_eps=1e-3 if bug == "paddle_stem_bn_eps" else 1e-5,
              no_stride_bias=bug == "paddle_sub_bias_no_stride")
    _trained_look(m)
    m.eval()
    return m


def _images():
    return np.random.default_rng(31).standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
