"""Hand-written port, paddle side: a tiny DeiT-style distilled vision transformer (written by "person A").

Input: `pixel_values` [2, 3, 16, 16] (positional, NCHW, numpy rng seed 23, standard normal).
Patch 4 -> 16 patches, width 32, 4 heads of 8, MLP hidden 64 (exact GELU), 2 pre-norm blocks,
LayerNorm eps 1e-6, 10 classes. Output: logits [2, 10], the average of the class head (on the
class token) and the distillation head (on the distillation token), as DeiT does at inference.

Token order on this side (the DeiT / HF order): [cls, dist, patch 0 .. patch 15], and the learned
position embedding [1, 18, 32] follows that order.

Paddle idioms on this side (HF-DeiT style, PaddleNLP naming):
- root `DistilledViT`: `embeddings` (DeiTEmbeddings), `blocks` (LayerList of `Block`, iterated),
  `norm` (LayerNorm), `head` and `head_dist` (two Linear(32, 10)); the token selection and the
  averaging are inline in the root forward.
- `DeiTEmbeddings` creates `cls_token` [1, 1, 32], `distillation_token` [1, 1, 32],
  `position_embeddings` [1, 18, 32] (create_parameter), and holds `patch_embeddings`
  (`PatchEmbed`, whose `projection` is a Conv2D(3, 32, 4, stride 4)); it concatenates
  [cls, dist, patches] and adds the positions.
- `Block`: `norm1`, `attn`, `norm2`, `mlp`, pre-norm residuals.
- `Attention`: SEPARATE `q_proj`, `k_proj`, `v_proj` Linear(32, 32) and `out_proj`; scores
  q k^T * 8^-0.5, F.softmax inline.
- `Mlp`: named `fc1`, `fc2`, with F.gelu inline (no activation module).
- model() gives the norms trained-looking weights / biases, every Linear a non-zero bias, the
  patch projection a DeiT-like small init (so the first norm sees a small-variance input) and
  the tokens / positions trained-looking values (seeded).

The torch side (port_deit_torch.py) was written independently: patches FIRST and the two extra
tokens appended at the end, one packed `tokens` parameter, a Linear patch projection over
einops-style (p1 p2 c) patches, a fused qkv, an nn.Sequential MLP and ONE Linear(32, 20) for
both heads.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_ln_eps_default   -> every LayerNorm is built with paddle's default epsilon 1e-5 instead
                             of DeiT's 1e-6 (precision-level)
  paddle_prenorm_residual -> the block's attention residual adds the attention output to the
                             NORMALISED input (x = norm1(x) + attn(norm1(x)))
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IMG, PATCH, IN_CH = 16, 4, 3
DIM, HEADS, MLP_HIDDEN, DEPTH, NUM_CLASSES = 32, 4, 64, 2, 10
NUM_PATCHES = (IMG // PATCH) ** 2
LN_EPS = 1e-6
BATCH = 2
OWN_BUGS = {"paddle_ln_eps_default", "paddle_prenorm_residual"}
OTHER_BUGS = {"torch_qkv_headwise", "torch_pos_cls_first"}


class PatchEmbed(nn.Layer):
    def __init__(self):
        super().__init__()
        self.projection = nn.Conv2D(IN_CH, DIM, PATCH, stride=PATCH, data_format="NCHW")

    def forward(self, pixel_values):
        x = self.projection(pixel_values)  # [B, 32, 4, 4]
        return x.flatten(2).transpose([0, 2, 1])  # [B, 16, 32]


class DeiTEmbeddings(nn.Layer):
    def __init__(self):
        super().__init__()
        zeros = nn.initializer.Constant(0.0)
        self.cls_token = self.create_parameter([1, 1, DIM], default_initializer=zeros)
        self.distillation_token = self.create_parameter([1, 1, DIM], default_initializer=zeros)
        self.position_embeddings = self.create_parameter([1, NUM_PATCHES + 2, DIM], default_initializer=zeros)
        self.patch_embeddings = PatchEmbed()

    def forward(self, pixel_values):
        x = self.patch_embeddings(pixel_values)
        b = x.shape[0]
        cls = self.cls_token.expand([b, -1, -1])
        dist = self.distillation_token.expand([b, -1, -1])
        x = paddle.concat([cls, dist, x], axis=1)
        return x + self.position_embeddings


class Attention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.num_heads = HEADS
        self.head_dim = DIM // HEADS
        self.scale = self.head_dim**-0.5
        self.q_proj = nn.Linear(DIM, DIM)
        self.k_proj = nn.Linear(DIM, DIM)
        self.v_proj = nn.Linear(DIM, DIM)
        self.out_proj = nn.Linear(DIM, DIM)

    def _split(self, t):
        b, n, _ = t.shape
        return t.reshape([b, n, self.num_heads, self.head_dim]).transpose([0, 2, 1, 3])

    def forward(self, x):
        b, n, c = x.shape
        q = self._split(self.q_proj(x))
        k = self._split(self.k_proj(x))
        v = self._split(self.v_proj(x))
        attn = paddle.matmul(q, k, transpose_y=True) * self.scale
        attn = F.softmax(attn, axis=-1)
        out = paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([b, n, c])
        return self.out_proj(out)


class Mlp(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(DIM, MLP_HIDDEN)
        self.fc2 = nn.Linear(MLP_HIDDEN, DIM)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Block(nn.Layer):
    def __init__(self, eps, prenorm_residual=False):
        super().__init__()
        self.prenorm_residual = prenorm_residual
        self.norm1 = nn.LayerNorm(DIM, epsilon=eps)
        self.attn = Attention()
        self.norm2 = nn.LayerNorm(DIM, epsilon=eps)
        self.mlp = Mlp()

    def forward(self, x):
        if self.prenorm_residual:
            h = self.norm1(x)
            x = h + self.attn(h)
        else:
            x = x + self.attn(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return x


class DistilledViT(nn.Layer):
    def __init__(self, eps=LN_EPS, prenorm_residual=False):
        super().__init__()
        self.embeddings = DeiTEmbeddings()
        self.blocks = nn.LayerList([Block(eps, prenorm_residual) for _ in range(DEPTH)])
        self.norm = nn.LayerNorm(DIM, epsilon=eps)
        self.head = nn.Linear(DIM, NUM_CLASSES)
        self.head_dist = nn.Linear(DIM, NUM_CLASSES)

    def forward(self, pixel_values):
        x = self.embeddings(pixel_values)
        for blk in self.blocks:
            x = blk(x)
        x = self.norm(x)
        logits = self.head(x[:, 0])
        logits_dist = self.head_dist(x[:, 1])
        return (logits + logits_dist) / 2


def _trained_look(m):
    rng = np.random.default_rng(29)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            layer.weight.set_value(rng.uniform(0.6, 1.4, DIM).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, DIM).astype("float32"))
        elif isinstance(layer, nn.Linear):
            layer.bias.set_value(rng.normal(0.0, 0.05, layer.bias.shape).astype("float32"))
    emb = m.embeddings
    proj = emb.patch_embeddings.projection
    proj.weight.set_value(rng.normal(0.0, 0.03, proj.weight.shape).astype("float32"))
    proj.bias.set_value(rng.normal(0.0, 0.02, proj.bias.shape).astype("float32"))
    emb.cls_token.set_value(rng.normal(0.0, 0.05, emb.cls_token.shape).astype("float32"))
    emb.distillation_token.set_value(rng.normal(0.0, 0.05, emb.distillation_token.shape).astype("float32"))
    emb.position_embeddings.set_value(rng.normal(0.0, 0.03, emb.position_embeddings.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_deit paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = DistilledViT(eps=1e-5 if bug == "paddle_ln_eps_default" else LN_EPS,
                     prenorm_residual=bug == "paddle_prenorm_residual")
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(23)
    return rng.standard_normal((BATCH, IN_CH, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # averaged logits [2, 10]
    return (output**2).mean()
