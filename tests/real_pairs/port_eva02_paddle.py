"""Hand-written port, paddle side: a tiny EVA-02-style ViT classifier (written by "person A").

Input: `pixel_values` [2, 3, 16, 16] (positional, NCHW, numpy rng seed 31, standard normal).
Patch 4 -> a 4 x 4 grid of 16 patch tokens, width 32, a cls token, a learned absolute position
embedding [1, 17, 32], 2 pre-norm blocks (LayerNorm eps 1e-6, no LayerScale), 4 heads of 8,
then a final LayerNorm and a linear head (32 -> 10) on the cls token: output logits [2, 10].

Block:  x = x + attn(norm1(x));  x = x + mlp(norm2(x))
attn:   qkv with q / v bias and NO k bias; 2D axial rotary position embedding on the 16 patch
        tokens of q and k (the cls token is not rotated); softmax(q k^T / sqrt(8)) v; proj.
mlp:    SwiGLU with a sub-LayerNorm: w3(ffn_ln(silu(w1(x)) * w2(x))), hidden 64.

Rotary (EVA-02 original, "VisionRotaryEmbeddingFast" style): per axis 4 of the 8 head features,
inv_freq = 1 / 10000^(arange(0, 4, 2) / 4) = [1, 0.01]; angles per patch (row r, column c) are
[r f0, r f0, r f1, r f1, c f0, c f0, c f1, c f1] (each frequency repeated for an INTERLEAVED
pair); out = t * cos + rotate_every_two(t) * sin, rotate_every_two(t)[2i] = -t[2i + 1],
[2i + 1] = t[2i].

Paddle idioms on this side (the original EVA-02 code):
- root `EVA02`: `patch_embed` (PatchEmbed: `proj` Conv2D(3, 32, 4, stride 4), flatten inline),
  then `cls_token` [1, 1, 32] and `pos_embed` [1, 17, 32] (create_parameter), then ONE shared
  `rope` layer (buffers `freqs_cos` / `freqs_sin` [16, 8], built once in __init__,
  non-persistable) that every attention also holds (the same object; paddle names it `rope`),
  then `blocks` (LayerList, iterated), `norm`, `head`.
- `Attention`: `qkv` Linear(32, 96, bias_attr=False) plus separate `q_bias` / `v_bias`
  parameters [32]; the bias is concat(q_bias, zeros, v_bias) applied with F.linear inline; the
  output is reshaped [B, N, 3, H, D]; `rope` is called on q[:, :, 1:] and k[:, :, 1:] (2 calls
  per block); `proj` Linear(32, 32).
- `SwiGLU`: `w1` (gate), `w2` (up), `act` nn.Silu, `ffn_ln` LayerNorm(64, eps 1e-6), `w3`.
- model() gives the norms trained-looking weights / biases and the biases / embeddings seeded
  non-zero values, so that nothing is an identity.

The torch side (port_eva02_torch.py) was written independently (HF-transformers style): three
Linears query / key (no bias) / value, a ROTATE-HALF rotary computed on the fly inside each
attention forward, an `embeddings` module that owns patch conv + cls + positions. Its query /
key rows are permuted per head (interleaved -> rotate-half pairs) when the weights are copied.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_rope_fp16_table    -> the shared rope layer builds its cos / sin buffers through
                               float16 (rounded to half precision, then stored as float32)
  paddle_patch_flatten_wh   -> PatchEmbed flattens the [B, C, 4, 4] conv map in column-major
                               (W, H) token order instead of row-major (H, W)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IMG, PATCH, IN_CH = 16, 4, 3
GRID = IMG // PATCH
DIM, HEADS, DEPTH, HIDDEN, N_CLASSES = 32, 4, 2, 64, 10
HEAD_DIM = DIM // HEADS
LN_EPS = 1e-6
ROPE_THETA = 10000.0
BATCH = 2
OWN_BUGS = {"paddle_rope_fp16_table", "paddle_patch_flatten_wh"}
OTHER_BUGS = {"torch_subln_eps_default", "torch_attn_scale_full_width"}


def rotate_every_two(x):
    # [..., (d r)] with r = 2 -> [..., d, 2] -> (-x2, x1) -> back
    shape = x.shape
    x = x.reshape(shape[:-1] + [shape[-1] // 2, 2])
    x1, x2 = x[..., 0], x[..., 1]
    return paddle.stack([-x2, x1], axis=-1).reshape(shape)


class VisionRotaryEmbeddingFast(nn.Layer):
    def __init__(self, half_dim, grid, theta=ROPE_THETA, fp16_table=False):
        super().__init__()
        inv = 1.0 / (theta ** (np.arange(0, half_dim, 2)[: half_dim // 2].astype("float64") / half_dim))
        t = np.arange(grid, dtype="float64")
        f = np.repeat(np.outer(t, inv), 2, axis=-1)  # [grid, half_dim], '... n -> ... (n r)'
        freqs = np.concatenate(
            [np.broadcast_to(f[:, None, :], (grid, grid, half_dim)), np.broadcast_to(f[None, :, :], (grid, grid, half_dim))],
            axis=-1,
        ).reshape(grid * grid, 2 * half_dim)
        cos, sin = np.cos(freqs), np.sin(freqs)
        if fp16_table:
            cos, sin = cos.astype("float16"), sin.astype("float16")
        self.register_buffer("freqs_cos", paddle.to_tensor(cos.astype("float32")), persistable=False)
        self.register_buffer("freqs_sin", paddle.to_tensor(sin.astype("float32")), persistable=False)

    def forward(self, t):
        return t * self.freqs_cos + rotate_every_two(t) * self.freqs_sin


class PatchEmbed(nn.Layer):
    def __init__(self, flatten_wh=False):
        super().__init__()
        self.flatten_wh = flatten_wh
        self.proj = nn.Conv2D(IN_CH, DIM, PATCH, stride=PATCH, data_format="NCHW")

    def forward(self, x):
        x = self.proj(x)  # [B, C, H, W]
        if self.flatten_wh:
            x = x.transpose([0, 1, 3, 2])
        return x.flatten(2).transpose([0, 2, 1])  # [B, H*W, C]


class Attention(nn.Layer):
    def __init__(self, rope):
        super().__init__()
        self.num_heads = HEADS
        self.scale = HEAD_DIM**-0.5
        self.qkv = nn.Linear(DIM, 3 * DIM, bias_attr=False)
        zeros = nn.initializer.Constant(0.0)
        self.q_bias = self.create_parameter([DIM], is_bias=True, default_initializer=zeros)
        self.v_bias = self.create_parameter([DIM], is_bias=True, default_initializer=zeros)
        self.rope = rope
        self.proj = nn.Linear(DIM, DIM)

    def forward(self, x):
        B, N, C = x.shape
        qkv_bias = paddle.concat([self.q_bias, paddle.zeros_like(self.v_bias), self.v_bias])
        qkv = F.linear(x, self.qkv.weight, qkv_bias)
        qkv = qkv.reshape([B, N, 3, self.num_heads, -1]).transpose([2, 0, 3, 1, 4])
        q, k, v = qkv[0], qkv[1], qkv[2]  # [B, H, N, D]
        q = paddle.concat([q[:, :, :1], self.rope(q[:, :, 1:])], axis=2)
        k = paddle.concat([k[:, :, :1], self.rope(k[:, :, 1:])], axis=2)
        attn = paddle.matmul(q * self.scale, k, transpose_y=True)
        attn = F.softmax(attn, axis=-1)
        x = paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([B, N, C])
        return self.proj(x)


class SwiGLU(nn.Layer):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(DIM, HIDDEN)
        self.w2 = nn.Linear(DIM, HIDDEN)
        self.act = nn.Silu()
        self.ffn_ln = nn.LayerNorm(HIDDEN, epsilon=LN_EPS)
        self.w3 = nn.Linear(HIDDEN, DIM)

    def forward(self, x):
        hidden = self.act(self.w1(x)) * self.w2(x)
        return self.w3(self.ffn_ln(hidden))


class Block(nn.Layer):
    def __init__(self, rope):
        super().__init__()
        self.norm1 = nn.LayerNorm(DIM, epsilon=LN_EPS)
        self.attn = Attention(rope)
        self.norm2 = nn.LayerNorm(DIM, epsilon=LN_EPS)
        self.mlp = SwiGLU()

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class EVA02(nn.Layer):
    def __init__(self, fp16_table=False, flatten_wh=False):
        super().__init__()
        self.patch_embed = PatchEmbed(flatten_wh)
        self.cls_token = self.create_parameter([1, 1, DIM], default_initializer=nn.initializer.Normal(0.0, 0.02))
        self.pos_embed = self.create_parameter([1, GRID * GRID + 1, DIM], default_initializer=nn.initializer.Normal(0.0, 0.02))
        self.rope = VisionRotaryEmbeddingFast(HEAD_DIM // 2, GRID, fp16_table=fp16_table)
        self.blocks = nn.LayerList([Block(self.rope) for _ in range(DEPTH)])
        self.norm = nn.LayerNorm(DIM, epsilon=LN_EPS)
        self.head = nn.Linear(DIM, N_CLASSES)

    def forward(self, pixel_values):
        x = self.patch_embed(pixel_values)
        cls = self.cls_token.expand([x.shape[0], -1, -1])
        x = paddle.concat([cls, x], axis=1) + self.pos_embed
        for blk in self.blocks:
            x = blk(x)
        x = self.norm(x)
        return self.head(x[:, 0])


def _trained_look(m):
    rng = np.random.default_rng(23)

    def put(p, arr):
        p.set_value(np.asarray(arr, dtype="float32").reshape(p.shape))

    put(m.cls_token, rng.normal(0.0, 0.5, m.cls_token.shape))
    put(m.pos_embed, rng.normal(0.0, 0.3, m.pos_embed.shape))
    put(m.patch_embed.proj.bias, rng.normal(0.0, 0.1, DIM))
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            n = layer.weight.shape[0]
            put(layer.weight, rng.uniform(0.6, 1.4, n))
            put(layer.bias, rng.normal(0.0, 0.1, n))
        elif isinstance(layer, nn.Linear) and layer.bias is not None:
            put(layer.bias, rng.normal(0.0, 0.05, layer.bias.shape))
        if isinstance(layer, Attention):
            put(layer.q_bias, rng.normal(0.0, 0.2, DIM))
            put(layer.v_bias, rng.normal(0.0, 0.2, DIM))
            # sharper attention, so that the positions (rotary) matter
            put(layer.qkv.weight, layer.qkv.weight.numpy() * 2.0)
        if isinstance(layer, SwiGLU):
            # a moderate hidden scale (var ~ 0.03) for the sub-LayerNorm
            put(layer.w1.weight, layer.w1.weight.numpy() * 0.5)
            put(layer.w2.weight, layer.w2.weight.numpy() * 0.5)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_eva02 paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = EVA02(fp16_table=bug == "paddle_rope_fp16_table", flatten_wh=bug == "paddle_patch_flatten_wh")
    _trained_look(m)
    m.eval()
    return m


def _pixels():
    rng = np.random.default_rng(31)
    return rng.standard_normal((BATCH, IN_CH, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_pixels()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
