"""Hand-written port, paddle side: a tiny DINOv2-style ViT backbone with register tokens (written by "person A").

Input: images [2, 3, 32, 32] (positional, NCHW, numpy rng seed 46, standard normal). Patch 8 ->
a 4 x 4 grid of 16 patch tokens, width 32, 4 heads of 8, 2 pre-norm blocks, SwiGLU hidden 48,
LayerNorm eps 1e-6 everywhere. Token sequence: [CLS, 2 registers, 16 patches] (19 tokens); the
learned position embedding covers CLS + patches only (17 rows), the registers get none. Output:
the final LayerNorm of the whole sequence, [2, 19, 32].

One block:  x = x + gamma_attn * attn(norm(x));  x = x + gamma_ffn * ffn(norm(x))
            attn: softmax(q k^T / sqrt(8)) v, heads merged, output projection
            ffn:  w3(silu(w1 x) * w2 x)      (LayerScale: a per-channel [32] scale)

Paddle idioms on this side (person A's own rewrite, not the reference layout):
- root `DinoV2Backbone` registers `patch_tokenizer` (a `PatchLinear`: the image is cut into
  8 x 8 patches with reshape / transpose, each patch flattened in (row, column, channel) order,
  then ONE nn.Linear(192, 32) `linear`), `layers` (LayerList of `EncoderBlock`, iterated),
  `final_norm`, and LAST its own parameters `cls_emb` [1, 1, 32], `reg_emb` [2, 32] (2-D) and
  `pos_emb` [1, 17, 32] (create_parameter). The position embedding is added to the patch tokens
  and to the CLS token separately (slices of `pos_emb`), then the sequence is concatenated.
- `EncoderBlock` registers `attention`, `ffn` BEFORE `attn_norm`, `ffn_norm`, then the two
  LayerScale vectors as bare parameters `gamma_attn`, `gamma_ffn` [32], multiplied inline.
- `SelfAttention`: separate `q_proj`, `k_proj`, `v_proj`, `o_proj`; scores with
  paddle.matmul(transpose_y=True), F.softmax.
- `SwiGLUFFN`: separate `w1` (gate), `w2` (value), `w3`, and an nn.Silu module `act`.
- model() gives the norms, the LayerScale vectors and the CLS / register / position embeddings
  trained-looking seeded values (nothing is an identity, no LayerScale at its 1e-5 init).

The torch side (port_dinov2_torch.py) was written independently in the layout of the DINOv2
reference code: a strided Conv2d patch embedding, a fused qkv, a fused w12, LayerScale modules.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_ls_gammas_swapped -> EncoderBlock.forward scales the attention branch by gamma_ffn and
                              the FFN branch by gamma_attn (both blocks)
  paddle_attn_norm_eps     -> every block's `attn_norm` is built as nn.LayerNorm(32) with paddle's
                              default epsilon 1e-5 instead of 1e-6 (precision-level)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IMG, PATCH, IN_CH = 32, 8, 3
DIM, HEADS, DEPTH, N_REG, FFN_HIDDEN = 32, 4, 2, 2, 48
GRID = IMG // PATCH
N_PATCH = GRID * GRID
LN_EPS = 1e-6
BATCH = 2
OWN_BUGS = {"paddle_ls_gammas_swapped", "paddle_attn_norm_eps"}
OTHER_BUGS = {"torch_attn_scale_dim", "torch_glu_sigmoid"}


class PatchLinear(nn.Layer):
    """[B, 3, 32, 32] -> [B, 16, 32]: patches flattened (p_row, p_col, channel), then one Linear."""

    def __init__(self, patch, in_ch, dim):
        super().__init__()
        self.patch = patch
        self.linear = nn.Linear(patch * patch * in_ch, dim)

    def forward(self, img):
        b, c, h, w = img.shape
        p = self.patch
        x = img.reshape([b, c, h // p, p, w // p, p])  # b c gh p1 gw p2
        x = x.transpose([0, 2, 4, 3, 5, 1])  # b gh gw p1 p2 c
        x = x.reshape([b, (h // p) * (w // p), p * p * c])
        return self.linear(x)


class SelfAttention(nn.Layer):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.o_proj = nn.Linear(dim, dim)

    def _split(self, t):
        b, n, _ = t.shape
        return t.reshape([b, n, self.heads, self.head_dim]).transpose([0, 2, 1, 3])

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self._split(self.q_proj(x)), self._split(self.k_proj(x)), self._split(self.v_proj(x))
        scores = paddle.matmul(q, k, transpose_y=True) / float(np.sqrt(self.head_dim))
        ctx = paddle.matmul(F.softmax(scores, axis=-1), v)
        ctx = ctx.transpose([0, 2, 1, 3]).reshape([b, n, d])
        return self.o_proj(ctx)


class SwiGLUFFN(nn.Layer):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden)
        self.w2 = nn.Linear(dim, hidden)
        self.w3 = nn.Linear(hidden, dim)
        self.act = nn.Silu()

    def forward(self, x):
        return self.w3(self.act(self.w1(x)) * self.w2(x))


class EncoderBlock(nn.Layer):
    def __init__(self, dim, heads, hidden, attn_norm_eps=LN_EPS, swap_gammas=False):
        super().__init__()
        self.swap_gammas = swap_gammas
        self.attention = SelfAttention(dim, heads)
        self.ffn = SwiGLUFFN(dim, hidden)
        self.attn_norm = nn.LayerNorm(dim, epsilon=attn_norm_eps) if attn_norm_eps is not None else nn.LayerNorm(dim)
        self.ffn_norm = nn.LayerNorm(dim, epsilon=LN_EPS)
        ls_init = nn.initializer.Constant(1e-5)
        self.gamma_attn = self.create_parameter([dim], default_initializer=ls_init)
        self.gamma_ffn = self.create_parameter([dim], default_initializer=ls_init)

    def forward(self, x):
        g_attn, g_ffn = (self.gamma_ffn, self.gamma_attn) if self.swap_gammas else (self.gamma_attn, self.gamma_ffn)
        x = x + g_attn * self.attention(self.attn_norm(x))
        x = x + g_ffn * self.ffn(self.ffn_norm(x))
        return x


class DinoV2Backbone(nn.Layer):
    def __init__(self, attn_norm_eps=LN_EPS, swap_gammas=False):
        super().__init__()
        self.patch_tokenizer = PatchLinear(PATCH, IN_CH, DIM)
        self.layers = nn.LayerList(
            [EncoderBlock(DIM, HEADS, FFN_HIDDEN, attn_norm_eps, swap_gammas) for _ in range(DEPTH)])
        self.final_norm = nn.LayerNorm(DIM, epsilon=LN_EPS)
        tn = nn.initializer.TruncatedNormal(std=0.02)
        self.cls_emb = self.create_parameter([1, 1, DIM], default_initializer=tn)
        self.reg_emb = self.create_parameter([N_REG, DIM], default_initializer=tn)
        self.pos_emb = self.create_parameter([1, 1 + N_PATCH, DIM], default_initializer=tn)

    def forward(self, images):
        b = images.shape[0]
        patches = self.patch_tokenizer(images) + self.pos_emb[:, 1:]
        cls = (self.cls_emb + self.pos_emb[:, :1]).expand([b, 1, DIM])
        regs = self.reg_emb.unsqueeze(0).expand([b, N_REG, DIM])  # registers: no position embedding
        x = paddle.concat([cls, regs, patches], axis=1)
        for block in self.layers:
            x = block(x)
        return self.final_norm(x)


def _trained_look(m):
    rng = np.random.default_rng(4646)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            layer.weight.set_value(rng.uniform(0.6, 1.4, DIM).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.1, DIM).astype("float32"))
        if isinstance(layer, EncoderBlock):
            for g in (layer.gamma_attn, layer.gamma_ffn):
                g.set_value(rng.normal(0.3, 0.15, DIM).astype("float32"))
    m.cls_emb.set_value(rng.normal(0.0, 0.03, (1, 1, DIM)).astype("float32"))
    m.reg_emb.set_value(rng.normal(0.0, 0.03, (N_REG, DIM)).astype("float32"))
    m.pos_emb.set_value(rng.normal(0.0, 0.1, (1, 1 + N_PATCH, DIM)).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_dinov2 paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = DinoV2Backbone(attn_norm_eps=None if bug == "paddle_attn_norm_eps" else LN_EPS,
                       swap_gammas=bug == "paddle_ls_gammas_swapped")
    _trained_look(m)
    m.eval()
    return m


def _images():
    return np.random.default_rng(46).standard_normal((BATCH, IN_CH, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_images()),), {}


def loss(output):
    # normalised tokens [2, 19, 32]
    return (output**2).mean()
