"""Hand-written port, paddle side: a tiny Restormer (written by "person A").

Input: one positional image batch [2, 3, 16, 16] (NCHW, numpy rng seed 53, uniform in [0, 1]).
Output: the restored image [2, 3, 16, 16] = output conv(blocks(patch_embed(img))) + img.

Architecture (dim 16, 2 heads, ffn_expansion_factor 2.66 -> hidden 42, bias=False everywhere):
  patch_embed: 3x3 conv (3 -> 16)
  2 TransformerBlocks: x = x + attn(norm1(x)); x = x + ffn(norm2(x))
    block 0 uses the 'WithBias' LayerNorm, block 1 the 'BiasFree' one (both over channels,
    eps 1e-5, biased variance; BiasFree divides x itself, not x - mean, by the std)
    MDTA (attn): q / k / v = depthwise 3x3(1x1 conv(x)); per head [B, 2, 8, H*W];
      q, k L2-normalised along the spatial axis; A = softmax((q @ k^T) * temperature[head]);
      out = project_out(A @ v)   (transposed / channel attention, an 8x8 map per head)
    GDFN (ffn): project_in 1x1 (16 -> 84); depthwise 3x3 (84); split x1 | x2;
      gelu(x1) * x2 (exact erf GELU); project_out 1x1 (42 -> 16)
  output: 3x3 conv (16 -> 3); + img

Paddle idioms on this side:
- root `Restormer`: `patch_embed` (OverlapPatchEmbed, its conv `proj`), `encoder_level1`
  (nn.Sequential of 2 TransformerBlock), `output` Conv2D.
- `LayerNorm` (one class, `bias_free` flag): reshapes NCHW -> [B, H*W, C] inline (to_3d),
  normalises over the last axis with paddle.mean / paddle.var, reshapes back. Parameters
  `weight` [C] (and `bias` [C] for WithBias) by create_parameter.
- `Attention` writes the q / k / v paths SEPARATELY: `to_q`, `to_k`, `to_v` 1x1 convs, then
  `q_dw`, `k_dw`, `v_dw` depthwise 3x3 convs; `temperature` [heads, 1, 1]; F.normalize(axis=-1),
  paddle.matmul(transpose_y=True), F.softmax; `project_out`.
- `FeedForward` (official layout): `project_in`, `dwconv`, `project_out`; chunk + F.gelu inline.
- model() gives the norms and temperatures trained-looking values (seeded, rng 59) and scales
  the GDFN depthwise conv weights by 3 (its gelu input then has std ~0.6 instead of ~0.2), so no
  bug hides behind an identity or tiny init.

The torch side (port_restormer_torch.py) was written independently: a fused `qkv` 1x1 conv and
a fused `qkv_dwconv`, one norm class per type computing over dim 1 of NCHW, einsum attention, an
nn.GELU module in the FFN, a ModuleList of blocks.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_ln_unbiased_var        -> the WithBias branch of LayerNorm calls paddle.var without
                                   unbiased=False (paddle's default is the unbiased n-1 variance)
  paddle_normalize_default_axis -> Attention normalises q and k with F.normalize's default
                                   axis=1 (the head axis of [B, heads, C/heads, H*W]) instead of
                                   axis=-1
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IN_CH, DIM, HEADS = 3, 16, 2
FFN_FACTOR = 2.66
LN_EPS = 1e-5
BATCH, SIZE = 2, 16
OWN_BUGS = {"paddle_ln_unbiased_var", "paddle_normalize_default_axis"}
OTHER_BUGS = {"torch_gelu_tanh", "torch_biasfree_as_rmsnorm"}
_BUG = {"name": ""}


class LayerNorm(nn.Layer):
    def __init__(self, dim, ln_type):
        super().__init__()
        self.bias_free = ln_type == "BiasFree"
        self.unbiased = _BUG["name"] == "paddle_ln_unbiased_var"
        self.weight = self.create_parameter([dim], default_initializer=nn.initializer.Constant(1.0))
        if not self.bias_free:
            self.bias = self.create_parameter([dim], default_initializer=nn.initializer.Constant(0.0), is_bias=True)

    def forward(self, x):
        b, c, h, w = x.shape
        x3 = x.flatten(2).transpose([0, 2, 1])  # to_3d: [B, H*W, C]
        if self.bias_free:
            sigma = paddle.var(x3, axis=-1, keepdim=True, unbiased=False)
            y = x3 / paddle.sqrt(sigma + LN_EPS) * self.weight
        else:
            mu = paddle.mean(x3, axis=-1, keepdim=True)
            if self.unbiased:
                sigma = paddle.var(x3, axis=-1, keepdim=True)
            else:
                sigma = paddle.var(x3, axis=-1, keepdim=True, unbiased=False)
            y = (x3 - mu) / paddle.sqrt(sigma + LN_EPS) * self.weight + self.bias
        return y.transpose([0, 2, 1]).reshape([b, c, h, w])  # to_4d


class Attention(nn.Layer):
    def __init__(self, dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.default_axis = _BUG["name"] == "paddle_normalize_default_axis"
        self.temperature = self.create_parameter([num_heads, 1, 1], default_initializer=nn.initializer.Constant(1.0))
        self.to_q = nn.Conv2D(dim, dim, 1, bias_attr=False)
        self.to_k = nn.Conv2D(dim, dim, 1, bias_attr=False)
        self.to_v = nn.Conv2D(dim, dim, 1, bias_attr=False)
        self.q_dw = nn.Conv2D(dim, dim, 3, padding=1, groups=dim, bias_attr=False)
        self.k_dw = nn.Conv2D(dim, dim, 3, padding=1, groups=dim, bias_attr=False)
        self.v_dw = nn.Conv2D(dim, dim, 3, padding=1, groups=dim, bias_attr=False)
        self.project_out = nn.Conv2D(dim, dim, 1, bias_attr=False)

    def forward(self, x):
        b, c, h, w = x.shape
        q = self.q_dw(self.to_q(x)).reshape([b, self.num_heads, c // self.num_heads, h * w])
        k = self.k_dw(self.to_k(x)).reshape([b, self.num_heads, c // self.num_heads, h * w])
        v = self.v_dw(self.to_v(x)).reshape([b, self.num_heads, c // self.num_heads, h * w])
        if self.default_axis:
            q, k = F.normalize(q), F.normalize(k)
        else:
            q, k = F.normalize(q, axis=-1), F.normalize(k, axis=-1)
        attn = paddle.matmul(q, k, transpose_y=True) * self.temperature
        attn = F.softmax(attn, axis=-1)
        out = paddle.matmul(attn, v).reshape([b, c, h, w])
        return self.project_out(out)


class FeedForward(nn.Layer):
    def __init__(self, dim, ffn_expansion_factor):
        super().__init__()
        hidden = int(dim * ffn_expansion_factor)
        self.project_in = nn.Conv2D(dim, hidden * 2, 1, bias_attr=False)
        self.dwconv = nn.Conv2D(hidden * 2, hidden * 2, 3, padding=1, groups=hidden * 2, bias_attr=False)
        self.project_out = nn.Conv2D(hidden, dim, 1, bias_attr=False)

    def forward(self, x):
        x = self.dwconv(self.project_in(x))
        x1, x2 = x.chunk(2, axis=1)
        return self.project_out(F.gelu(x1) * x2)


class TransformerBlock(nn.Layer):
    def __init__(self, dim, num_heads, ffn_expansion_factor, ln_type):
        super().__init__()
        self.norm1 = LayerNorm(dim, ln_type)
        self.attn = Attention(dim, num_heads)
        self.norm2 = LayerNorm(dim, ln_type)
        self.ffn = FeedForward(dim, ffn_expansion_factor)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.ffn(self.norm2(x))


class OverlapPatchEmbed(nn.Layer):
    def __init__(self, in_c, embed_dim):
        super().__init__()
        self.proj = nn.Conv2D(in_c, embed_dim, 3, padding=1, bias_attr=False)

    def forward(self, x):
        return self.proj(x)


class Restormer(nn.Layer):
    def __init__(self, ln_types=("WithBias", "BiasFree")):
        super().__init__()
        self.patch_embed = OverlapPatchEmbed(IN_CH, DIM)
        self.encoder_level1 = nn.Sequential(*[TransformerBlock(DIM, HEADS, FFN_FACTOR, t) for t in ln_types])
        self.output = nn.Conv2D(DIM, IN_CH, 3, padding=1, bias_attr=False)

    def forward(self, inp_img):
        x = self.patch_embed(inp_img)
        x = self.encoder_level1(x)
        return self.output(x) + inp_img


def _trained_look(m):
    rng = np.random.default_rng(59)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, LayerNorm):
            layer.weight.set_value(rng.normal(1.0, 0.15, DIM).astype("float32"))
            if not layer.bias_free:
                layer.bias.set_value(rng.normal(0.0, 0.1, DIM).astype("float32"))
        if isinstance(layer, FeedForward):
            # a trained GDFN depthwise conv is far from its small fan-in init
            layer.dwconv.weight.set_value((layer.dwconv.weight.numpy() * 3.0).astype("float32"))
        if isinstance(layer, Attention):
            layer.temperature.set_value(rng.uniform(0.5, 3.0, [HEADS, 1, 1]).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_restormer paddle: unknown PADIFF_BUG {bug!r}")
    _BUG["name"] = bug
    paddle.seed(0)
    try:
        m = Restormer()
    finally:
        _BUG["name"] = ""
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(53)
    return rng.uniform(0.0, 1.0, (BATCH, IN_CH, SIZE, SIZE)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # restored image [2, 3, 16, 16]
    return (output**2).mean()
