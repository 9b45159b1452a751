"""Hand-written port, paddle side: a tiny MobileViT-v2 style classifier (written by "person A").

Input: one image batch [2, 3, 32, 32] (positional, NCHW, numpy rng seed 4141, standard normal).
Output: logits [2, 10].

Network (eval mode; BatchNorm with trained-looking running statistics):
  stem        conv3x3 s2 (3 -> 16) + BN + SiLU                                  -> [2, 16, 16, 16]
  MV2 block 0 inverted residual 16 -> 16, expand 2, stride 1, residual           -> [2, 16, 16, 16]
  MV2 block 1 inverted residual 16 -> 24, expand 2, stride 2                     -> [2, 24, 8, 8]
              (expand 1x1 conv-BN-SiLU, depthwise 3x3 conv-BN-SiLU, project 1x1 conv-BN)
  MobileViT-v2 block (in 24, attention width d = 32, 2 transformer layers, FFN 64, patch 2x2):
    local rep   depthwise 3x3 conv-BN-SiLU, then 1x1 conv 24 -> 32 (no bias, no norm)
    unfold      [B, 32, 8, 8] -> patches [B, 32, P = 4, N = 16] (P: pixel inside a 2x2 patch,
                row-major; N: patch index, row-major over the 4x4 patch grid)
    layer       x = x + attn(GN(x)); x = x + fc2(silu(fc1(GN(x))))   GN = GroupNorm(1, 32)
    attn        separable self-attention: score = conv(1 channel), key, value (1x1 convs),
                s = softmax(score) over the N patches; context = sum_N(key * s) [B, 32, P, 1];
                out = out_proj(relu(value) * context)
    final GroupNorm(1, 32), fold back to [B, 32, 8, 8], 1x1 conv 32 -> 24 + BN (no act)
  MV2 block 2 inverted residual 24 -> 32, expand 2, stride 2                     -> [2, 32, 4, 4]
  head        global average pool, Linear(32, 10)

Paddle idioms on this side:
- `ConvBNLayer` is ONE module (children `conv`, `bn`); the SiLU is inline F.silu when act=True.
- `MV2Block` registers `expand`, `depthwise`, `project` (three ConvBNLayer); residual inline.
- `SeparableSelfAttention` has THREE separate 1x1 convs registered `to_value`, `to_key`,
  `to_score`, then `out_proj`; it works on [B, d, P, N] with softmax over axis -1.
- `TransformerLayer`: `norm1` (nn.GroupNorm(1, d)), `attn`, `norm2`, `ffn_fc1`, `ffn_fc2`
  (1x1 Conv2D); the FFN's SiLU is inline.
- `MobileViTv2Block` registers `transformer` (LayerList) and `final_norm` FIRST, then
  `dw_conv`, `to_tokens`, `proj`; the patch unfold / fold are reshape + transpose inline.
- root `MobileViTv2Tiny`: `stem`, `mv2_blocks` (LayerList of the two early blocks, iterated),
  `vit_block`, `down_block` (the last MV2Block), `head` (Linear 32 -> 10), global pool inline
  (paddle.mean).
- model() gives every BN trained-looking affine weights / running statistics, every GroupNorm
  trained-looking affine weights and every conv / Linear bias non-zero values (seeded; paddle
  initialises biases to 0), so that nothing is an identity.

The torch side (port_mobilevitv2_torch.py) was written independently (ml-cvnets / HF style):
fused score|key|value `qkv_proj`, F.unfold / F.fold with patches laid out [B, d, N, P],
nn.Sequential blocks with activation modules.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_fold_swap -> the fold's transpose uses perm [0, 1, 4, 3, 5, 2] instead of
                      [0, 1, 4, 2, 5, 3]: every 2x2 patch is put back transposed (its two
                      off-diagonal pixels swapped)
  paddle_gn_eps    -> TransformerLayer builds its pre-attention `norm1` with epsilon=1e-3
                      instead of 1e-5 (precision-level)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

BATCH, IMG, NUM_CLASSES = 2, 32, 10
D_ATTN, FFN, N_LAYERS, PATCH = 32, 64, 2, 2
OWN_BUGS = {"paddle_fold_swap", "paddle_gn_eps"}
OTHER_BUGS = {"torch_softmax_dim", "torch_expand_relu6"}


class ConvBNLayer(nn.Layer):
    def __init__(self, in_ch, out_ch, kernel, stride=1, groups=1, act=True):
        super().__init__()
        self.act = act
        self.conv = nn.Conv2D(in_ch, out_ch, kernel, stride=stride, padding=(kernel - 1) // 2,
                              groups=groups, bias_attr=False, data_format="NCHW")
        self.bn = nn.BatchNorm2D(out_ch, epsilon=1e-5, data_format="NCHW")

    def forward(self, x):
        y = self.bn(self.conv(x))
        return F.silu(y) if self.act else y


class MV2Block(nn.Layer):
    def __init__(self, in_ch, out_ch, stride, expand):
        super().__init__()
        hidden = in_ch * expand
        self.use_res = stride == 1 and in_ch == out_ch
        self.expand = ConvBNLayer(in_ch, hidden, 1)
        self.depthwise = ConvBNLayer(hidden, hidden, 3, stride=stride, groups=hidden)
        self.project = ConvBNLayer(hidden, out_ch, 1, act=False)

    def forward(self, x):
        y = self.project(self.depthwise(self.expand(x)))
        return x + y if self.use_res else y


class SeparableSelfAttention(nn.Layer):
    """x: [B, d, P, N] -> [B, d, P, N]."""

    def __init__(self, dim):
        super().__init__()
        self.to_value = nn.Conv2D(dim, dim, 1, data_format="NCHW")
        self.to_key = nn.Conv2D(dim, dim, 1, data_format="NCHW")
        self.to_score = nn.Conv2D(dim, 1, 1, data_format="NCHW")
        self.out_proj = nn.Conv2D(dim, dim, 1, data_format="NCHW")

    def forward(self, x):
        scores = F.softmax(self.to_score(x), axis=-1)               # [B, 1, P, N]
        context = paddle.sum(self.to_key(x) * scores, axis=-1, keepdim=True)  # [B, d, P, 1]
        out = F.relu(self.to_value(x)) * context
        return self.out_proj(out)


class TransformerLayer(nn.Layer):
    def __init__(self, dim, ffn_dim, norm1_eps=1e-5):
        super().__init__()
        self.norm1 = nn.GroupNorm(1, dim, epsilon=norm1_eps, data_format="NCHW")
        self.attn = SeparableSelfAttention(dim)
        self.norm2 = nn.GroupNorm(1, dim, epsilon=1e-5, data_format="NCHW")
        self.ffn_fc1 = nn.Conv2D(dim, ffn_dim, 1, data_format="NCHW")
        self.ffn_fc2 = nn.Conv2D(ffn_dim, dim, 1, data_format="NCHW")

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        x = x + self.ffn_fc2(F.silu(self.ffn_fc1(self.norm2(x))))
        return x


class MobileViTv2Block(nn.Layer):
    def __init__(self, in_ch, dim, ffn_dim, n_layers, fold_swap=False, norm1_eps=1e-5):
        super().__init__()
        self.fold_swap = fold_swap
        self.transformer = nn.LayerList([TransformerLayer(dim, ffn_dim, norm1_eps) for _ in range(n_layers)])
        self.final_norm = nn.GroupNorm(1, dim, epsilon=1e-5, data_format="NCHW")
        self.dw_conv = ConvBNLayer(in_ch, in_ch, 3, groups=in_ch)
        self.to_tokens = nn.Conv2D(in_ch, dim, 1, bias_attr=False, data_format="NCHW")
        self.proj = ConvBNLayer(dim, in_ch, 1, act=False)

    @staticmethod
    def _unfold(x):
        b, c, h, w = x.shape
        nh, nw = h // PATCH, w // PATCH
        x = x.reshape([b, c, nh, PATCH, nw, PATCH]).transpose([0, 1, 3, 5, 2, 4])
        return x.reshape([b, c, PATCH * PATCH, nh * nw]), (h, w)

    def _fold(self, x, hw):
        b, c = x.shape[0], x.shape[1]
        h, w = hw
        nh, nw = h // PATCH, w // PATCH
        x = x.reshape([b, c, PATCH, PATCH, nh, nw])
        perm = [0, 1, 4, 3, 5, 2] if self.fold_swap else [0, 1, 4, 2, 5, 3]
        return x.transpose(perm).reshape([b, c, h, w])

    def forward(self, x):
        fm = self.to_tokens(self.dw_conv(x))
        patches, hw = self._unfold(fm)
        for layer in self.transformer:
            patches = layer(patches)
        patches = self.final_norm(patches)
        fm = self._fold(patches, hw)
        return self.proj(fm)


class MobileViTv2Tiny(nn.Layer):
    def __init__(self, fold_swap=False, norm1_eps=1e-5):
        super().__init__()
        self.stem = ConvBNLayer(3, 16, 3, stride=2)
        self.mv2_blocks = nn.LayerList([MV2Block(16, 16, 1, 2), MV2Block(16, 24, 2, 2)])
        self.vit_block = MobileViTv2Block(24, D_ATTN, FFN, N_LAYERS, fold_swap, norm1_eps)
        self.down_block = MV2Block(24, 32, 2, 2)
        self.head = nn.Linear(32, NUM_CLASSES)

    def forward(self, x):
        x = self.stem(x)
        for blk in self.mv2_blocks:
            x = blk(x)
        x = self.vit_block(x)
        x = self.down_block(x)
        return self.head(paddle.mean(x, axis=[2, 3]))


def _trained_look(m):
    rng = np.random.default_rng(4142)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, c).astype("float32"))
        if isinstance(layer, nn.GroupNorm):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
        if isinstance(layer, (nn.Conv2D, nn.Linear)) and layer.bias is not None:
            c = layer.bias.shape[0]
            layer.bias.set_value(rng.normal(0.0, 0.1, c).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_mobilevitv2 paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = MobileViTv2Tiny(fold_swap=bug == "paddle_fold_swap",
                        norm1_eps=1e-3 if bug == "paddle_gn_eps" else 1e-5)
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(4141)
    return rng.standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
