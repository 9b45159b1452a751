"""Hand-written port, paddle side: a tiny CaiT image transformer (written by "person A").

Input: one image batch [2, 3, 16, 16] (positional, NCHW, numpy rng seed 31, standard normal).
Patch embedding: a 4x4 / stride 4 conv (3 -> 32), flattened to 16 tokens [B, 16, 32], plus a
learned position embedding. Then:
  2 self-attention blocks ("LayerScale blocks", pre-norm):
      x = x + gamma_1 * TalkingHeadAttn(norm1(x))
      x = x + gamma_2 * Mlp(norm2(x))
    TalkingHeadAttn (4 heads of 8): logits = (q * 8^-0.5) @ k^T, [B, H, N, N]; a Linear(4, 4)
    mixes the HEADS of the logits (proj_l), softmax over keys, a second Linear(4, 4) mixes the
    heads of the probabilities (proj_w), then @ v, merge heads, proj.
  2 class-attention blocks: the class token (a learned [1, 1, 32] parameter) is introduced only
    here; u = concat([cls, x]) (class token FIRST), and only the class token queries:
      cls = cls + gamma_1 * ClassAttn(norm1(u))      (q from u[:, 0], k / v from all of u)
      cls = cls + gamma_2 * Mlp(norm2(cls))
  then concat([cls, x]) -> final LayerNorm -> head Linear(32, 10) on token 0: logits [2, 10].
LayerNorm eps 1e-6 everywhere, Mlp = fc1 (32 -> 64) -> exact GELU -> fc2 (64 -> 32).

Paddle idioms on this side (timm cait.py style):
- root `CaiT`: `patch_embed` (nn.Conv2D), then the parameters `pos_embed` [1, 16, 32] and
  `cls_token` [1, 1, 32] (create_parameter), `blocks` and `blocks_token_only` (LayerLists,
  iterated), `norm`, `head`.
- `TalkingHeadAttn`: ONE fused `qkv` Linear(32, 96) laid out [q | k | v] (each head-major), the
  head-mixing Linears `proj_l` (pre-softmax) and `proj_w` (post-softmax) applied to the logits
  transposed to [B, N, N, H], then `proj`.
- `LayerScaleBlock` / `LayerScaleBlockCA`: LayerScale is an INLINE multiply by the parameters
  `gamma_1` / `gamma_2` [32] (create_parameter, registered after the sublayers).
- `ClassAttn`: SEPARATE `q`, `k`, `v` Linears, then `proj`.
- `Mlp`: `fc1`, `fc2` with F.gelu inline.
- model() gives the LayerNorms, every Linear / conv bias, the gammas and the cls / position
  embeddings trained-looking seeded values (gamma in U(0.1, 0.5)), so nothing is an identity.

The torch side (port_cait_torch.py) was written independently: separate q / k / v in the
self-attention, head mixing as einsum with [H, H] parameters, LayerScale modules, a fused kv in
the class attention, and the class token appended LAST.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_heads_mix_swapped -> TalkingHeadAttn.forward applies proj_w before the softmax and
                              proj_l after it (the two head-mixing Linears swapped)
  paddle_gammas_swapped    -> LayerScaleBlock.forward scales the attention branch by gamma_2
                              and the MLP branch by gamma_1
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IMG, PATCH, IN_CH = 16, 4, 3
DIM, HEADS, MLP_HIDDEN = 32, 4, 64
DEPTH, DEPTH_TOKEN_ONLY, NUM_CLASSES = 2, 2, 10
NUM_PATCHES = (IMG // PATCH) ** 2
LN_EPS = 1e-6
BATCH = 2
OWN_BUGS = {"paddle_heads_mix_swapped", "paddle_gammas_swapped"}
OTHER_BUGS = {"torch_ca_scale_dim", "torch_gelu_tanh"}


class Mlp(nn.Layer):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class TalkingHeadAttn(nn.Layer):
    def __init__(self, dim, num_heads, swap_mix=False):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.swap_mix = swap_mix
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj_l = nn.Linear(num_heads, num_heads)
        self.proj_w = nn.Linear(num_heads, num_heads)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape([B, N, 3, self.num_heads, C // self.num_heads]).transpose([2, 0, 3, 1, 4])
        q, k, v = qkv[0] * self.scale, qkv[1], qkv[2]
        attn = paddle.matmul(q, k, transpose_y=True)  # [B, H, N, N]
        pre, post = (self.proj_w, self.proj_l) if self.swap_mix else (self.proj_l, self.proj_w)
        attn = pre(attn.transpose([0, 2, 3, 1])).transpose([0, 3, 1, 2])
        attn = F.softmax(attn, axis=-1)
        attn = post(attn.transpose([0, 2, 3, 1])).transpose([0, 3, 1, 2])
        x = paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([B, N, C])
        return self.proj(x)


class LayerScaleBlock(nn.Layer):
    def __init__(self, dim, num_heads, hidden, swap_mix=False, swap_gammas=False):
        super().__init__()
        self.swap_gammas = swap_gammas
        self.norm1 = nn.LayerNorm(dim, epsilon=LN_EPS)
        self.attn = TalkingHeadAttn(dim, num_heads, swap_mix)
        self.norm2 = nn.LayerNorm(dim, epsilon=LN_EPS)
        self.mlp = Mlp(dim, hidden)
        init = nn.initializer.Constant(1e-5)
        self.gamma_1 = self.create_parameter([dim], default_initializer=init)
        self.gamma_2 = self.create_parameter([dim], default_initializer=init)

    def forward(self, x):
        g_attn, g_mlp = (self.gamma_2, self.gamma_1) if self.swap_gammas else (self.gamma_1, self.gamma_2)
        x = x + g_attn * self.attn(self.norm1(x))
        x = x + g_mlp * self.mlp(self.norm2(x))
        return x


class ClassAttn(nn.Layer):
    def __init__(self, dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        H, D = self.num_heads, C // self.num_heads
        q = self.q(x[:, 0:1]).reshape([B, 1, H, D]).transpose([0, 2, 1, 3])  # class token only
        k = self.k(x).reshape([B, N, H, D]).transpose([0, 2, 1, 3])
        v = self.v(x).reshape([B, N, H, D]).transpose([0, 2, 1, 3])
        attn = paddle.matmul(q * self.scale, k, transpose_y=True)  # [B, H, 1, N]
        attn = F.softmax(attn, axis=-1)
        x_cls = paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([B, 1, C])
        return self.proj(x_cls)


class LayerScaleBlockCA(nn.Layer):
    def __init__(self, dim, num_heads, hidden):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, epsilon=LN_EPS)
        self.attn = ClassAttn(dim, num_heads)
        self.norm2 = nn.LayerNorm(dim, epsilon=LN_EPS)
        self.mlp = Mlp(dim, hidden)
        init = nn.initializer.Constant(1e-5)
        self.gamma_1 = self.create_parameter([dim], default_initializer=init)
        self.gamma_2 = self.create_parameter([dim], default_initializer=init)

    def forward(self, x, x_cls):
        u = paddle.concat([x_cls, x], axis=1)
        x_cls = x_cls + self.gamma_1 * self.attn(self.norm1(u))
        x_cls = x_cls + self.gamma_2 * self.mlp(self.norm2(x_cls))
        return x_cls


class CaiT(nn.Layer):
    def __init__(self, swap_mix=False, swap_gammas=False):
        super().__init__()
        self.patch_embed = nn.Conv2D(IN_CH, DIM, PATCH, stride=PATCH, data_format="NCHW")
        normal = nn.initializer.TruncatedNormal(std=0.02)
        self.pos_embed = self.create_parameter([1, NUM_PATCHES, DIM], default_initializer=normal)
        self.cls_token = self.create_parameter([1, 1, DIM], default_initializer=normal)
        self.blocks = nn.LayerList(
            [LayerScaleBlock(DIM, HEADS, MLP_HIDDEN, swap_mix, swap_gammas) for _ in range(DEPTH)])
        self.blocks_token_only = nn.LayerList(
            [LayerScaleBlockCA(DIM, HEADS, MLP_HIDDEN) for _ in range(DEPTH_TOKEN_ONLY)])
        self.norm = nn.LayerNorm(DIM, epsilon=LN_EPS)
        self.head = nn.Linear(DIM, NUM_CLASSES)

    def forward(self, img):
        B = img.shape[0]
        x = self.patch_embed(img).flatten(2).transpose([0, 2, 1])  # [B, 16, 32]
        x = x + self.pos_embed
        for blk in self.blocks:
            x = blk(x)
        cls_tokens = self.cls_token.expand([B, -1, -1])
        for blk in self.blocks_token_only:
            cls_tokens = blk(x, cls_tokens)
        x = paddle.concat([cls_tokens, x], axis=1)
        x = self.norm(x)
        return self.head(x[:, 0])


def _trained_look(m):
    rng = np.random.default_rng(23)

    def put(p, arr):
        p.set_value(arr.astype("float32").reshape(p.shape))

    for name, p in m.named_parameters():
        shape = tuple(p.shape)
        if name.endswith(("gamma_1", "gamma_2")):
            put(p, rng.uniform(0.1, 0.5, shape))
        elif name in ("pos_embed", "cls_token"):
            put(p, rng.normal(0.0, 0.2, shape))
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            put(layer.weight, rng.normal(1.0, 0.1, DIM))
            put(layer.bias, rng.normal(0.0, 0.1, DIM))
        elif isinstance(layer, (nn.Linear, nn.Conv2D)):
            put(layer.bias, rng.normal(0.0, 0.05, layer.bias.shape))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_cait paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = CaiT(swap_mix=bug == "paddle_heads_mix_swapped", swap_gammas=bug == "paddle_gammas_swapped")
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(31)
    return rng.standard_normal((BATCH, IN_CH, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()
