"""Hand-written port, paddle side: a tiny MobileNetV4 (hybrid) classifier (written by "person A").

Input: images [2, 3, 32, 32] (positional, NCHW, numpy rng seed 11, standard normal). Output:
logits [2, 10].

  stem      conv 3x3 stride 2 (3 -> 16, no bias) -> BN -> relu                      16x16
  blocks.0  UIB "ExtraDW": start dw 3x3 -> expand 1x1 (16 -> 48) -> middle dw 3x3 stride 2
            -> project 1x1 (48 -> 24); no skip                                        8x8
  blocks.1  UIB "ConvNeXt-like": start dw 5x5 -> expand (24 -> 48) -> project (48 -> 24);
            layer scale, skip                                                         8x8
  blocks.2  UIB "IB": expand (24 -> 48) -> middle dw 3x3 stride 2 -> project (48 -> 32)  4x4
  blocks.3  Mobile MQA: BN -> multi-query attention (4 query heads of 8, ONE shared key / value
            head of 8; key / value from a strided dw 3x3 (stride 2) + BN on a 2x2 map) -> out
            1x1 (32 -> 32); layer scale, skip                                         4x4
  blocks.4  UIB "FFN": expand (32 -> 64) -> project (64 -> 32); layer scale, skip      4x4
  head      global average pool -> conv 1x1 (32 -> 64, no bias) -> BN -> relu -> Linear(64, 10)

UIB conventions (MobileNetV4 paper / timm): every conv is bias-free and followed by a BN; the
start dw conv has NO activation, expand and middle dw are followed by relu, the projection has
no activation. The stride sits on the middle dw when there is one (on the start dw otherwise).
Layer scale: y = shortcut + gamma * f(x). BN epsilon is 1e-5 everywhere. MQA scale: 1/sqrt(8).

Paddle idioms on this side:
- root `MobileNetV4`: `stem_conv`, `stem_bn`, `blocks` (a flat LayerList of five blocks, mixing
  `UIBlock` and `MobileMQABlock`), `head_conv`, `head_bn`, `fc`; the pooling is an inline
  paddle.mean, every relu is an inline F.relu.
- `UIBlock`: layer scale `gamma` [C] (create_parameter, when used), then flat conv / BN pairs
  `start_dw_conv` / `start_dw_bn`, `expand_conv` / `expand_bn`, `middle_dw_conv` /
  `middle_dw_bn`, `proj_conv` / `proj_bn` (only those the block uses are created).
- `MobileMQABlock`: the attention is INLINE in the block (no attention module): `norm`,
  `q_proj`, ONE shared key/value downsampling `kv_down` (dw conv stride 2) + `kv_norm`, ONE fused
  `kv_proj` 1x1 conv (32 -> 16: key channels 0:8, value channels 8:16), `out_proj`, `gamma` [C].
- model() gives every BN trained-looking affine weights / running statistics, the layer scales
  trained-looking values and the MQA query / key-value projections a wider Normal(0, 0.6) (so the
  attention is peaked, not near-uniform), numpy rng seed 23: nothing is an identity.

The torch side (port_mobilenetv4_torch.py) was written independently, timm style: ConvNormAct
modules with an nn.ReLU / nn.Identity `act`, stages in an nn.Sequential of nn.Sequentials, a
MultiQueryAttention2d module with SEPARATE `key` and `value` paths (each its own down conv, norm,
proj), LayerScale2d modules with a [C, 1, 1] gamma and an nn.AdaptiveAvgPool2d / nn.Flatten head.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_expand_bn_eps     -> UIBlock builds its `expand_bn` with epsilon=1e-3 (the TF / Keras
                              default) instead of 1e-5, in every UIB block (precision-level)
  paddle_mqa_scale_heads   -> the MQA block scales the logits by 1/sqrt(num_heads * key_dim)
                              (1/sqrt(32)) instead of 1/sqrt(key_dim)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

BATCH, IMG, NUM_CLASSES = 2, 32, 10
STEM_C, HEAD_C = 16, 64
HEADS, KEY_DIM, KV_STRIDE = 4, 8, 2
OWN_BUGS = {"paddle_expand_bn_eps", "paddle_mqa_scale_heads"}
OTHER_BUGS = {"torch_start_dw_stride", "torch_layer_scale_after_skip"}

# (in, out, start dw k, middle dw k, stride, expand ratio, layer scale)
UIB_CFG = {
    0: (16, 24, 3, 3, 2, 3, False),  # ExtraDW
    1: (24, 24, 5, 0, 1, 2, True),  # ConvNeXt-like
    2: (24, 32, 0, 3, 2, 2, False),  # IB
    4: (32, 32, 0, 0, 1, 2, True),  # FFN
}


class UIBlock(nn.Layer):
    def __init__(self, cin, cout, start_k, mid_k, stride, expand, layer_scale, expand_eps=1e-5):
        super().__init__()
        hidden = cin * expand
        self.start_k, self.mid_k = start_k, mid_k
        self.use_skip = stride == 1 and cin == cout
        if layer_scale:
            self.gamma = self.create_parameter([cout], default_initializer=nn.initializer.Constant(1e-5))
        else:
            self.gamma = None
        if start_k:
            s = 1 if mid_k else stride
            self.start_dw_conv = nn.Conv2D(cin, cin, start_k, stride=s, padding=start_k // 2, groups=cin,
                                           bias_attr=False)
            self.start_dw_bn = nn.BatchNorm2D(cin)
        self.expand_conv = nn.Conv2D(cin, hidden, 1, bias_attr=False)
        self.expand_bn = nn.BatchNorm2D(hidden, epsilon=expand_eps)
        if mid_k:
            self.middle_dw_conv = nn.Conv2D(hidden, hidden, mid_k, stride=stride, padding=mid_k // 2,
                                            groups=hidden, bias_attr=False)
            self.middle_dw_bn = nn.BatchNorm2D(hidden)
        self.proj_conv = nn.Conv2D(hidden, cout, 1, bias_attr=False)
        self.proj_bn = nn.BatchNorm2D(cout)

    def forward(self, x):
        shortcut = x
        if self.start_k:
            x = self.start_dw_bn(self.start_dw_conv(x))
        x = F.relu(self.expand_bn(self.expand_conv(x)))
        if self.mid_k:
            x = F.relu(self.middle_dw_bn(self.middle_dw_conv(x)))
        x = self.proj_bn(self.proj_conv(x))
        if self.gamma is not None:
            x = x * self.gamma.reshape([1, -1, 1, 1])
        if self.use_skip:
            x = x + shortcut
        return x


class MobileMQABlock(nn.Layer):
    def __init__(self, dim, heads, key_dim, kv_stride, scale_all_heads=False):
        super().__init__()
        self.heads, self.key_dim = heads, key_dim
        self.scale = (heads * key_dim) ** -0.5 if scale_all_heads else key_dim**-0.5
        self.norm = nn.BatchNorm2D(dim)
        self.q_proj = nn.Conv2D(dim, heads * key_dim, 1, bias_attr=False)
        self.kv_down = nn.Conv2D(dim, dim, 3, stride=kv_stride, padding=1, groups=dim, bias_attr=False)
        self.kv_norm = nn.BatchNorm2D(dim)
        self.kv_proj = nn.Conv2D(dim, 2 * key_dim, 1, bias_attr=False)
        self.out_proj = nn.Conv2D(heads * key_dim, dim, 1, bias_attr=False)
        self.gamma = self.create_parameter([dim], default_initializer=nn.initializer.Constant(1e-5))

    def forward(self, x):
        b, _, h, w = x.shape
        shortcut = x
        x = self.norm(x)
        q = self.q_proj(x).reshape([b, self.heads, self.key_dim, h * w]).transpose([0, 1, 3, 2])
        kv = self.kv_proj(self.kv_norm(self.kv_down(x)))  # [B, 2 * kd, h / 2, w / 2]
        k, v = paddle.split(kv, 2, axis=1)
        k = k.flatten(2).unsqueeze(1)  # [B, 1, kd, M]
        v = v.flatten(2).transpose([0, 2, 1]).unsqueeze(1)  # [B, 1, M, kd]
        attn = F.softmax(paddle.matmul(q, k) * self.scale, axis=-1)  # [B, heads, HW, M]
        o = paddle.matmul(attn, v)  # [B, heads, HW, kd]
        o = o.transpose([0, 1, 3, 2]).reshape([b, self.heads * self.key_dim, h, w])
        o = self.out_proj(o)
        return shortcut + o * self.gamma.reshape([1, -1, 1, 1])


class MobileNetV4(nn.Layer):
    def __init__(self, expand_eps=1e-5, scale_all_heads=False):
        super().__init__()
        self.stem_conv = nn.Conv2D(3, STEM_C, 3, stride=2, padding=1, bias_attr=False)
        self.stem_bn = nn.BatchNorm2D(STEM_C)
        blocks = []
        for i in range(5):
            if i == 3:
                blocks.append(MobileMQABlock(32, HEADS, KEY_DIM, KV_STRIDE, scale_all_heads))
            else:
                blocks.append(UIBlock(*UIB_CFG[i], expand_eps=expand_eps))
        self.blocks = nn.LayerList(blocks)
        self.head_conv = nn.Conv2D(32, HEAD_C, 1, bias_attr=False)
        self.head_bn = nn.BatchNorm2D(HEAD_C)
        self.fc = nn.Linear(HEAD_C, NUM_CLASSES)

    def forward(self, x):
        x = F.relu(self.stem_bn(self.stem_conv(x)))
        for blk in self.blocks:
            x = blk(x)
        x = paddle.mean(x, axis=[2, 3], keepdim=True)
        x = F.relu(self.head_bn(self.head_conv(x)))
        return self.fc(x.flatten(1))


def _trained_look(m):
    rng = np.random.default_rng(23)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, n).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, n).astype("float32"))
        if isinstance(layer, (UIBlock, MobileMQABlock)) and layer.gamma is not None:
            layer.gamma.set_value(rng.uniform(0.2, 0.9, layer.gamma.shape).astype("float32"))
        if isinstance(layer, MobileMQABlock):
            # trained query / key projections give peaked attention (logit std ~1.6 on these inputs)
            for conv in (layer.q_proj, layer.kv_proj):
                conv.weight.set_value(rng.normal(0.0, 0.6, conv.weight.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_mobilenetv4 paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = MobileNetV4(expand_eps=1e-3 if bug == "paddle_expand_bn_eps" else 1e-5,
                    scale_all_heads=bug == "paddle_mqa_scale_heads")
    _trained_look(m)
    m.eval()
    return m


def _images():
    rng = np.random.default_rng(11)
    return rng.standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
