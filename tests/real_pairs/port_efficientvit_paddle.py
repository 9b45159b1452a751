"""Hand-written port, paddle side: a tiny EfficientViT-style classifier (written by "person A").

Input: one image batch `pixels` [2, 3, 32, 32] (positional, NCHW, numpy rng seed 38, standard
normal). Output: class logits [2, 10].

Network (BN eps 1e-5 everywhere, Hardswish x * relu6(x + 3) / 6):
  stem      conv 3x3 s2 (3 -> 8, no bias) -> BN -> hswish                      [2, 8, 16, 16]
  downsample MBConv 8 -> 16, expand 4 (mid 32), stride 2, no residual:
            1x1 expand -> BN -> hswish -> dw 3x3 s2 -> BN -> hswish -> 1x1 -> BN  [2, 16, 8, 8]
  2 x EfficientViT block at 8 x 8:
            x = x + LiteMLA(x)                 (context)
            x = x + MBConv(16 -> 16, expand 4, stride 1)(x)  (local; the skip is inside MBConvP)
  head      global average pool -> Linear(16, 10)

LiteMLA (lite multi-scale linear attention, 2 heads of dim 8, scales 3 and 5):
  qkv  = 1x1 conv 16 -> 48 (no bias), PACKED head by head: channel h*24 + p*8 + t, p = q / k / v
  ms   = concat([qkv, agg3(qkv), agg5(qkv)], channels)            [B, 144, H, W]
         aggK = depthwise KxK conv on 48 channels (no bias) -> 1x1 conv with groups = 3 * heads = 6
         (no bias); each group of 8 channels is one (head, q / k / v) part
  ms reshaped to [B, 6, 24, HW] (6 heads: branch-major, head-minor), q | k | v = 8 | 8 | 8
  q, k = relu(q), relu(k); v padded with a ones column -> [B, 6, HW, 9]
  vk = k^T v [B, 6, 8, 9];  out = q vk;  out = out[..., :8] / (out[..., 8:] + 1e-15)
  out -> [B, 48, H, W] (channel = head * 8 + t) -> 1x1 conv 48 -> 16 (no bias) -> BN (no act)

Paddle idioms on this side:
- root `EffViTTiny`: `stem_cba` (ConvNormHS), `down_mb` (MBConvP), `vit_blocks` (LayerList of
  `EViTBlock`, iterated), `cls_fc` nn.Linear(16, 10); the average pool is inline (paddle.mean).
- `ConvNormHS`: `conv2d` (Conv2D, no bias), `norm` (BatchNorm2D); the Hardswish is inline F.hardswish.
- `MBConvP`: `expand_cba`, `dw_cba`, `project_cb` (ConvNormHS, the last one without act); the
  skip add (stride 1, same width) is inline in MBConvP.forward.
- `EViTBlock`: `ctx_mla` (LiteMLA), `loc_mb` (MBConvP); the context residual add is inline.
- `LiteMLA`: `qkv_conv` (one packed Conv2D 16 -> 48), `ms_aggs` (LayerList of nn.Sequential(dw, pw)),
  `out_cb` (ConvNormHS, no act); the ReLU linear attention is inline code of LiteMLA.forward.

The torch side (port_efficientvit_torch.py) was written independently: separate q / k / v
nn.Linear on channels-last tokens, a PLANAR packed [q | k | v] map for the aggregation, an einsum
linear attention with an explicit normaliser, nn.Sequential conv / BN / nn.Hardswish modules.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_qkv_split_planar -> LiteMLA splits each branch's 48 packed channels as [q | k | v] planes
                             of 16 (head-major inside) instead of head by head [h0: q k v][h1: q k v]
  paddle_proj_bn_eps      -> the LiteMLA output BN is built with epsilon=1e-3 (TF default) instead
                             of 1e-5 (precision-level)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IN_CH, STEM_CH, WIDTH, EXPAND, N_CLASSES = 3, 8, 16, 4, 10
HEAD_DIM, N_BLOCKS = 8, 2
SCALES = (3, 5)
LIN_EPS = 1e-15
BATCH, IMG = 2, 32
OWN_BUGS = {"paddle_qkv_split_planar", "paddle_proj_bn_eps"}
OTHER_BUGS = {"torch_local_relu6", "torch_stride_on_expand"}


class ConvNormHS(nn.Layer):
    def __init__(self, cin, cout, k=1, stride=1, groups=1, act=True, bn_eps=1e-5):
        super().__init__()
        self.act = act
        self.conv2d = nn.Conv2D(cin, cout, k, stride=stride, padding=k // 2, groups=groups, bias_attr=False)
        self.norm = nn.BatchNorm2D(cout, epsilon=bn_eps)

    def forward(self, x):
        x = self.norm(self.conv2d(x))
        return F.hardswish(x) if self.act else x


class MBConvP(nn.Layer):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        mid = cin * expand
        self.expand_cba = ConvNormHS(cin, mid, 1)
        self.dw_cba = ConvNormHS(mid, mid, 3, stride=stride, groups=mid)
        self.project_cb = ConvNormHS(mid, cout, 1, act=False)
        self.skip = stride == 1 and cin == cout

    def forward(self, x):
        y = self.project_cb(self.dw_cba(self.expand_cba(x)))
        return x + y if self.skip else y


class LiteMLA(nn.Layer):
    def __init__(self, channels, dim, scales, planar_split=False, out_bn_eps=1e-5):
        super().__init__()
        self.dim = dim
        self.heads = channels // dim
        self.planar_split = planar_split
        total = self.heads * dim
        self.qkv_conv = nn.Conv2D(channels, 3 * total, 1, bias_attr=False)
        self.ms_aggs = nn.LayerList([
            nn.Sequential(
                nn.Conv2D(3 * total, 3 * total, k, padding=k // 2, groups=3 * total, bias_attr=False),
                nn.Conv2D(3 * total, 3 * total, 1, groups=3 * self.heads, bias_attr=False),
            )
            for k in scales
        ])
        self.out_cb = ConvNormHS(total * (1 + len(scales)), channels, 1, act=False, bn_eps=out_bn_eps)

    def forward(self, x):
        B, _, H, W = x.shape
        d = self.dim
        qkv = self.qkv_conv(x)
        ms = paddle.concat([qkv] + [agg(qkv) for agg in self.ms_aggs], axis=1)  # [B, 144, H, W]
        if self.planar_split:
            # each branch read as [q-plane | k-plane | v-plane], 16 channels each
            t = ms.reshape([B, -1, 3, self.heads, d, H * W]).transpose([0, 1, 3, 5, 2, 4])
            t = t.reshape([B, -1, H * W, 3 * d])
        else:
            t = ms.reshape([B, -1, 3 * d, H * W]).transpose([0, 1, 3, 2])  # [B, nh, HW, 3d]
        q = F.relu(t[:, :, :, :d])
        k = F.relu(t[:, :, :, d:2 * d])
        v = t[:, :, :, 2 * d:]
        v = paddle.concat([v, paddle.ones_like(v[:, :, :, :1])], axis=-1)  # [B, nh, HW, d+1]
        vk = paddle.matmul(k, v, transpose_x=True)  # [B, nh, d, d+1]
        out = paddle.matmul(q, vk)  # [B, nh, HW, d+1]
        out = out[:, :, :, :d] / (out[:, :, :, d:] + LIN_EPS)
        out = out.transpose([0, 1, 3, 2]).reshape([B, -1, H, W])
        return self.out_cb(out)


class EViTBlock(nn.Layer):
    def __init__(self, channels, bug=""):
        super().__init__()
        self.ctx_mla = LiteMLA(channels, HEAD_DIM, SCALES, planar_split=bug == "paddle_qkv_split_planar",
                               out_bn_eps=1e-3 if bug == "paddle_proj_bn_eps" else 1e-5)
        self.loc_mb = MBConvP(channels, channels, 1, EXPAND)

    def forward(self, x):
        x = x + self.ctx_mla(x)
        return self.loc_mb(x)  # MBConvP adds its own skip (stride 1, same width)


class EffViTTiny(nn.Layer):
    def __init__(self, bug=""):
        super().__init__()
        self.stem_cba = ConvNormHS(IN_CH, STEM_CH, 3, stride=2)
        self.down_mb = MBConvP(STEM_CH, WIDTH, 2, EXPAND)
        self.vit_blocks = nn.LayerList([EViTBlock(WIDTH, bug) for _ in range(N_BLOCKS)])
        self.cls_fc = nn.Linear(WIDTH, N_CLASSES)

    def forward(self, pixels):
        x = self.down_mb(self.stem_cba(pixels))
        for blk in self.vit_blocks:
            x = blk(x)
        return self.cls_fc(paddle.mean(x, axis=[2, 3]))


def _trained_look(m):
    rng = np.random.default_rng(381)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, c).astype("float32"))
    m.cls_fc.bias.set_value(rng.normal(0.0, 0.2, N_CLASSES).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_efficientvit paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = EffViTTiny(bug if bug in OWN_BUGS else "")
    _trained_look(m)
    m.eval()
    return m


def _pixels():
    rng = np.random.default_rng(38)
    return rng.standard_normal((BATCH, IN_CH, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_pixels()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()
