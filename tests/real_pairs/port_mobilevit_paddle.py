"""Hand-written port, paddle side: a tiny MobileViT-style hybrid CNN / transformer classifier
(written by "person A", PaddleClas-flavoured).

Sizes: RGB 32x32 images, batch 2, 10 classes, eval mode, fp32.
- `conv_1` ConvBNLayer: Conv2D(3, 16, 3, stride 2, padding 1, no bias) -> 16x16, BatchNorm2D,
  SiLU (F.silu inline).
- `mv2` InvertedResidual (expand 2, stride 1, residual): `expand_conv` ConvBNLayer 1x1 16 -> 32
  (+ SiLU), `dw_conv` ConvBNLayer 3x3 depthwise (groups 32, + SiLU), then `pw_conv` Conv2D 1x1
  32 -> 16 and `pw_bn` (no activation), + the block input.
- `mvit` MobileViTBlock (channels 16, transformer width d = 32, 2x2 patches):
    conv_kxk   ConvBNLayer 3x3 16 -> 16 (+ SiLU)   local representation
    conv_1x1   Conv2D 1x1 16 -> 32, no bias, no BN
    unfold     [B, 32, 16, 16] -> [B * 4, 64, 32]: ONE reshape to [B, d, nh, ph, nw, pw], ONE
               transpose to [B, ph, pw, nh, nw, d], reshape (patch pixel p = ph * 2 + pw,
               patch n = nh * 8 + nw)
    transformer LayerList of 1 TransformerBlock (pre-LN): norm1, attn (hand-written: separate
               q / k / v Linears 32 -> 32, 2 heads of 16, matmul, F.softmax(axis=-1), proj),
               norm2, mlp (fc1 32 -> 64, act nn.Silu, fc2 64 -> 32)
    norm       LayerNorm(32) after the transformer
    fold       the inverse reshape / transpose, back to [B, 32, 16, 16]
    conv_proj  ConvBNLayer 1x1 32 -> 16 (+ SiLU)
    fusion     ConvBNLayer 3x3 32 -> 16 (+ SiLU) on concat([block input, conv_proj output])
- `pool` AdaptiveAvgPool2D(1), flatten, `classifier` Linear(16, 10).

Paddle idioms: ConvBNLayer with `conv` / `bn` children (BatchNorm2D, default epsilon 1e-5),
Linear weights [in, out], LayerList, the MobileViTBlock registers `transformer` and `norm`
BEFORE `conv_kxk` / `conv_1x1` (registration order differs from call order). The BN running
statistics and affine parameters are set to random values in model() so eval-mode BN is not an
identity.

The torch side (port_mobilevit_torch.py) was written independently (ml-cvnets-flavoured):
nn.Sequential conv blocks, nn.MultiheadAttention with a packed in_proj, and the unfold / fold
done by two reshape + transpose steps in another order.

PADIFF_BUG (this side's bugs; the torch side's names are accepted and ignored, any other name
raises ValueError):
  paddle_softmax_axis -> the attention softmax is taken over axis=-2 (the query axis) instead of
                         axis=-1 (the key axis)
  paddle_mlp_relu     -> the transformer MLP activation is nn.ReLU instead of nn.Silu
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

BATCH, IN_CHANS, IMG, CLASSES = 2, 3, 32, 10
C, EXPAND, D, HEADS, MLP_DIM, PATCH = 16, 2, 32, 2, 64, 2
OWN_BUGS = {"paddle_softmax_axis", "paddle_mlp_relu"}
OTHER_BUGS = {"torch_fold_transposed", "torch_fusion_concat_swapped"}


class ConvBNLayer(nn.Layer):
    def __init__(self, cin, cout, kernel, stride=1, groups=1, act=True):
        super().__init__()
        self.conv = nn.Conv2D(cin, cout, kernel, stride=stride, padding=kernel // 2, groups=groups,
                              bias_attr=False)
        self.bn = nn.BatchNorm2D(cout)
        self.act = act

    def forward(self, x):
        x = self.bn(self.conv(x))
        return F.silu(x) if self.act else x


class InvertedResidual(nn.Layer):
    def __init__(self, cin, cout, expand):
        super().__init__()
        hidden = cin * expand
        self.expand_conv = ConvBNLayer(cin, hidden, 1)
        self.dw_conv = ConvBNLayer(hidden, hidden, 3, groups=hidden)
        self.pw_conv = nn.Conv2D(hidden, cout, 1, bias_attr=False)
        self.pw_bn = nn.BatchNorm2D(cout)
        self.use_res = cin == cout

    def forward(self, x):
        y = self.pw_bn(self.pw_conv(self.dw_conv(self.expand_conv(x))))
        return x + y if self.use_res else y


class Attention(nn.Layer):
    def __init__(self, dim, heads, softmax_axis=-1):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.scale = self.head_dim**-0.5
        self.softmax_axis = softmax_axis
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)

    def _heads(self, t):
        b, n, _ = t.shape
        return t.reshape([b, n, self.heads, self.head_dim]).transpose([0, 2, 1, 3])

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self._heads(self.q(x)), self._heads(self.k(x)), self._heads(self.v(x))
        attn = paddle.matmul(q, k, transpose_y=True) * self.scale  # [b, h, n, n]
        attn = F.softmax(attn, axis=self.softmax_axis)
        out = paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([b, n, c])
        return self.proj(out)


class Mlp(nn.Layer):
    def __init__(self, dim, hidden, relu=False):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.ReLU() if relu else nn.Silu()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class TransformerBlock(nn.Layer):
    def __init__(self, dim, heads, mlp_dim, softmax_axis=-1, relu=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads, softmax_axis)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, mlp_dim, relu)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class MobileViTBlock(nn.Layer):
    def __init__(self, channels, dim, softmax_axis=-1, relu=False):
        super().__init__()
        self.transformer = nn.LayerList([TransformerBlock(dim, HEADS, MLP_DIM, softmax_axis, relu)])
        self.norm = nn.LayerNorm(dim)
        self.conv_kxk = ConvBNLayer(channels, channels, 3)
        self.conv_1x1 = nn.Conv2D(channels, dim, 1, bias_attr=False)
        self.conv_proj = ConvBNLayer(dim, channels, 1)
        self.fusion = ConvBNLayer(2 * channels, channels, 3)
        self.ph = self.pw = PATCH

    def unfold(self, x):
        b, d, h, w = x.shape
        nh, nw = h // self.ph, w // self.pw
        x = x.reshape([b, d, nh, self.ph, nw, self.pw]).transpose([0, 3, 5, 2, 4, 1])
        return x.reshape([b * self.ph * self.pw, nh * nw, d]), (b, d, nh, nw)

    def fold(self, x, info):
        b, d, nh, nw = info
        x = x.reshape([b, self.ph, self.pw, nh, nw, d]).transpose([0, 5, 3, 1, 4, 2])
        return x.reshape([b, d, nh * self.ph, nw * self.pw])

    def forward(self, x):
        y = self.conv_1x1(self.conv_kxk(x))
        y, info = self.unfold(y)
        for blk in self.transformer:
            y = blk(y)
        y = self.fold(self.norm(y), info)
        y = self.conv_proj(y)
        return self.fusion(paddle.concat([x, y], axis=1))


class MobileViTTiny(nn.Layer):
    def __init__(self, softmax_axis=-1, relu=False):
        super().__init__()
        self.conv_1 = ConvBNLayer(IN_CHANS, C, 3, stride=2)
        self.mv2 = InvertedResidual(C, C, EXPAND)
        self.mvit = MobileViTBlock(C, D, softmax_axis, relu)
        self.pool = nn.AdaptiveAvgPool2D(1)
        self.classifier = nn.Linear(C, CLASSES)

    def forward(self, x):
        x = self.mvit(self.mv2(self.conv_1(x)))
        return self.classifier(paddle.flatten(self.pool(x), 1))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_mobilevit paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = MobileViTTiny(softmax_axis=-2 if bug == "paddle_softmax_axis" else -1, relu=bug == "paddle_mlp_relu")
    rng = np.random.default_rng(5)
    for layer in m.sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.5, 1.5, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, n).astype("float32"))
    m.eval()
    return m


def _images():
    return np.random.default_rng(3).standard_normal((BATCH, IN_CHANS, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
