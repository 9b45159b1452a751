"""Hand-written port, paddle side: a tiny CvT (Convolutional vision Transformer) classifier (written by "person A").

Input: positional `pixel_values` [2, 3, 32, 32] (NCHW, numpy rng seed 3, 0.5 * standard normal).
Output: logits [2, 10].

Two stages; each stage = convolutional token embedding + transformer blocks:
  stage 0: Conv2D(3 -> 16, k7, s4, p2) -> tokens [B, 64, 16] -> LayerNorm; 1 block, 1 head
  stage 1: Conv2D(16 -> 32, k3, s2, p1) -> tokens [B, 16, 32] -> LayerNorm; class token
           prepended -> [B, 17, 32]; 2 blocks, 2 heads of 16
Between the stages the (class-token-free) tokens are put back into an NCHW map [B, 16, 8, 8].
Block (pre-norm): x = x + attn(LN(x)); x = x + mlp(LN(x)) (mlp: Linear(C, 2C), exact GELU,
Linear(2C, C)). Attention: the class token (if any) is split off; the patch tokens go back to a
[B, C, H, W] map and through three convolutional projections, each depthwise Conv2D(3x3, pad 1,
no bias) + BatchNorm2D: stride 1 for q, stride 2 for k and v (8x8 -> 4x4, 4x4 -> 2x2); the
maps are flattened back to tokens, the class token is put back in front, then separate linear
projections q / k / v, scaled-dot-product attention with scale head_dim ** -0.5, softmax,
output projection. Head: LayerNorm of the class token of the last stage, Linear(32, 10).
LayerNorm eps 1e-5, BatchNorm eps 1e-5 everywhere.

Paddle idioms on this side:
- root `CvTNet`: `stages` (LayerList of `CvTStage`, iterated), `norm` (LayerNorm(32)), `head`
  (Linear(32, 10)). The token -> NCHW conversion between stages is inline in the root.
- `CvTStage`: `patch_embed` (`ConvEmbed`: `proj` Conv2D, `norm` LayerNorm; returns TOKENS
  [B, HW, C], flatten + transpose inline), `blocks` (LayerList of `CvTBlock`), and, last stage
  only, `cls_token` [1, 1, 32] (create_parameter, registered last). Returns the tokens of the
  stage (class token included).
- `CvTBlock`: `norm1`, `attn`, `norm2`, `mlp` (`Mlp`: `fc1`, `fc2`, F.gelu inline).
- `ConvAttention`: the three conv projections are nn.Sequential(Conv2D(groups=C), BatchNorm2D)
  built by one helper (`conv_proj_q`, `conv_proj_k`, `conv_proj_v`, children "0" / "1"), then
  SEPARATE `proj_q`, `proj_k`, `proj_v` Linear(C, C) and `proj`. Heads are split by reshape +
  transpose in a helper method, token layout [B, N, C] throughout (the NCHW map only lives inside
  the helper that calls a conv projection).
- model() gives all LayerNorm / BatchNorm layers trained-looking affine weights and running
  statistics and the class token trained-looking values (rng seed 11), so nothing is an identity.

The torch side (port_cvt_torch.py) was written independently (HF-like): an NCHW embedding
module, inline depthwise conv / BN calls and a packed nn.MultiheadAttention.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_bn_args_swapped -> the conv-projection helper builds nn.BatchNorm2D(C, 1e-5, 0.1) with
                            torch's positional order (eps, momentum) in mind: paddle reads it as
                            momentum=1e-5, epsilon=0.1 (every q / k / v projection)
  paddle_heads_reshape   -> the head split reshapes [B, N, C] straight to [B, heads, N, d]
                            without the transpose (harmless with 1 head: stage 0 is unchanged)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IN_CH, NUM_CLASSES = 3, 10
DIMS, HEADS, DEPTHS = (16, 32), (1, 2), (1, 2)
PATCH = ((7, 4, 2), (3, 2, 1))  # kernel, stride, padding of each stage's token embedding
MLP_RATIO = 2
BATCH, IMG = 2, 32
OWN_BUGS = {"paddle_bn_args_swapped", "paddle_heads_reshape"}
OTHER_BUGS = {"torch_tokens_view", "torch_gelu_tanh"}


def _conv_proj(dim, stride, bn_swapped=False):
    dw = nn.Conv2D(dim, dim, 3, stride=stride, padding=1, groups=dim, bias_attr=False)
    if bn_swapped:
        bn = nn.BatchNorm2D(dim, 1e-5, 0.1)
    else:
        bn = nn.BatchNorm2D(dim, momentum=0.9, epsilon=1e-5)
    return nn.Sequential(dw, bn)


class ConvEmbed(nn.Layer):
    def __init__(self, in_ch, dim, kernel, stride, padding):
        super().__init__()
        self.proj = nn.Conv2D(in_ch, dim, kernel, stride=stride, padding=padding)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        x = self.proj(x)  # [B, C, H, W]
        x = x.flatten(2).transpose([0, 2, 1])  # [B, HW, C]
        return self.norm(x)


class ConvAttention(nn.Layer):
    def __init__(self, dim, heads, with_cls, bn_swapped=False, heads_reshape=False):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.scale = self.head_dim**-0.5
        self.with_cls = with_cls
        self.heads_reshape = heads_reshape
        self.conv_proj_q = _conv_proj(dim, 1, bn_swapped)
        self.conv_proj_k = _conv_proj(dim, 2, bn_swapped)
        self.conv_proj_v = _conv_proj(dim, 2, bn_swapped)
        self.proj_q = nn.Linear(dim, dim)
        self.proj_k = nn.Linear(dim, dim)
        self.proj_v = nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)

    @staticmethod
    def _project(seq, tokens, h, w):
        b, _n, c = tokens.shape
        fmap = tokens.transpose([0, 2, 1]).reshape([b, c, h, w])
        return seq(fmap).flatten(2).transpose([0, 2, 1])

    def _split_heads(self, t):
        b, n, _c = t.shape
        if self.heads_reshape:
            return t.reshape([b, self.heads, n, self.head_dim])
        return t.reshape([b, n, self.heads, self.head_dim]).transpose([0, 2, 1, 3])

    def forward(self, x, h, w):
        if self.with_cls:
            cls_tok, x = x[:, :1], x[:, 1:]
        q = self._project(self.conv_proj_q, x, h, w)
        k = self._project(self.conv_proj_k, x, h, w)
        v = self._project(self.conv_proj_v, x, h, w)
        if self.with_cls:
            q = paddle.concat([cls_tok, q], axis=1)
            k = paddle.concat([cls_tok, k], axis=1)
            v = paddle.concat([cls_tok, v], axis=1)
        q = self._split_heads(self.proj_q(q))
        k = self._split_heads(self.proj_k(k))
        v = self._split_heads(self.proj_v(v))
        attn = F.softmax(paddle.matmul(q, k, transpose_y=True) * self.scale, axis=-1)
        out = paddle.matmul(attn, v)  # [B, heads, Nq, d]
        b, _, n, _ = out.shape
        out = out.transpose([0, 2, 1, 3]).reshape([b, n, self.heads * self.head_dim])
        return self.proj(out)


class Mlp(nn.Layer):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class CvTBlock(nn.Layer):
    def __init__(self, dim, heads, with_cls, bug):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = ConvAttention(dim, heads, with_cls, bn_swapped=bug == "paddle_bn_args_swapped",
                                  heads_reshape=bug == "paddle_heads_reshape")
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, dim * MLP_RATIO)

    def forward(self, x, h, w):
        x = x + self.attn(self.norm1(x), h, w)
        return x + self.mlp(self.norm2(x))


class CvTStage(nn.Layer):
    def __init__(self, in_ch, dim, heads, depth, patch, with_cls, bug):
        super().__init__()
        self.with_cls = with_cls
        self.kernel, self.stride, self.padding = patch
        self.patch_embed = ConvEmbed(in_ch, dim, *patch)
        self.blocks = nn.LayerList([CvTBlock(dim, heads, with_cls, bug) for _ in range(depth)])
        if with_cls:
            self.cls_token = self.create_parameter([1, 1, dim], default_initializer=nn.initializer.Normal(0.0, 0.02))

    def forward(self, x):
        h, w = [(s + 2 * self.padding - self.kernel) // self.stride + 1 for s in x.shape[2:]]
        x = self.patch_embed(x)
        if self.with_cls:
            x = paddle.concat([self.cls_token.expand([x.shape[0], -1, -1]), x], axis=1)
        for blk in self.blocks:
            x = blk(x, h, w)
        return x


class CvTNet(nn.Layer):
    def __init__(self, bug=""):
        super().__init__()
        stages, in_ch = [], IN_CH
        for i in range(len(DIMS)):
            stages.append(CvTStage(in_ch, DIMS[i], HEADS[i], DEPTHS[i], PATCH[i], i == len(DIMS) - 1, bug))
            in_ch = DIMS[i]
        self.stages = nn.LayerList(stages)
        self.norm = nn.LayerNorm(DIMS[-1])
        self.head = nn.Linear(DIMS[-1], NUM_CLASSES)

    def forward(self, pixel_values):
        x = pixel_values
        for i, stage in enumerate(self.stages):
            tokens = stage(x)
            if i < len(self.stages) - 1:
                b, n, c = tokens.shape
                side = round(n**0.5)
                x = tokens.transpose([0, 2, 1]).reshape([b, c, side, side])
        return self.head(self.norm(tokens[:, 0]))


def _trained_look(m):
    rng = np.random.default_rng(11)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
        elif isinstance(layer, nn.BatchNorm2D):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, n).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, n).astype("float32"))
        elif isinstance(layer, CvTStage) and layer.with_cls:
            layer.cls_token.set_value(rng.normal(0.0, 0.3, layer.cls_token.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_cvt paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = CvTNet(bug if bug in OWN_BUGS else "")
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(3)
    return (0.5 * rng.standard_normal((BATCH, IN_CH, IMG, IMG))).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
