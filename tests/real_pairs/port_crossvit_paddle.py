"""Hand-written port, paddle side: a tiny CrossViT (Chen et al., 2021) image classifier (written by "person A").

Input: one image batch `x` [2, 3, 16, 16] (positional, NCHW, numpy rng seed 27, standard normal).
Output: class logits [2, 10], the mean of the two branches' head logits.

Two branches over the same image:
  branch 0 ("large patch"): 8x8 patches -> 4 tokens, width 32, 2 heads of 16
  branch 1 ("small patch"): 4x4 patches -> 16 tokens, width 16, 2 heads of 8
each: patch embedding, a learned CLS token prepended, a learned position embedding
[1, 1 + N, D] added, then 2 pre-norm transformer blocks (LayerNorm eps 1e-6, multi-head
self-attention with biases, MLP ratio 2 with exact GELU).

Then ONE cross-attention fusion (CrossViT "MultiScaleBlock", as in the reference code):
  for branch i (other branch j):
    c   = Linear_i->j(GELU(LN(cls_i)))                       (projs[i])
    seq = concat([c, patch tokens of branch j])               (the other CLS is dropped)
    c'  = c + CrossAttn_j(LN(seq))  (query: the first token only; keys / values: all of seq;
                                     width and heads of branch j)
    cls_i <- Linear_j->i(GELU(LN(c')))                        (revert_projs[i])
Finally a LayerNorm per branch, a Linear head (-> 10) per branch on the CLS token, and the
mean of the two logit vectors.

Paddle idioms on this side (close to the reference CrossViT code):
- root `CrossViT`: `patch_embed` LayerList of `PatchEmbed` (a Conv2D(3, D, p, stride=p) `proj`,
  flattened and transposed inline), `cls_token` / `pos_embed` nn.ParameterList, `blocks`
  LayerList holding the one `MultiScaleBlock`, `norm` LayerList of LayerNorm, `head` LayerList
  of Linear. The CLS concat and position add are inline in the root forward.
- `MultiScaleBlock`: `blocks` LayerList of two nn.Sequential(Block, Block) (one per branch,
  called once each), `projs` LayerList of nn.Sequential(LayerNorm, GELU, Linear), `fusion`
  LayerList of `CrossAttentionBlock`, `revert_projs` LayerList of nn.Sequential(LayerNorm, GELU,
  Linear). The token slicing and concats are inline in its forward.
- `Block`: `norm1`, `attn`, `norm2`, `mlp`; residuals inline. `Attention` keeps SEPARATE
  `q_proj`, `k_proj`, `v_proj` Linears and `proj`. `Mlp`: `fc1`, `act` (nn.GELU module), `fc2`.
- `CrossAttentionBlock`: `norm1`, `attn`; `CrossAttention`: `wq` and ONE fused `wkv`
  Linear(D, 2D) (output columns [k | v]), then `proj`.
- model() gives every LayerNorm a trained-looking weight / bias and every Linear / Conv a
  seeded non-zero bias, the CLS tokens and position embeddings seeded values (rng seed 2027).

The torch side (port_crossvit_torch.py) was written independently (lucidrains style).

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_mlp_gelu_tanh    -> the transformer MLP's activation is built as
                             nn.GELU(approximate=True) (tanh approximation) instead of the exact
                             erf GELU, in every block of both branches (precision-level)
  paddle_kv_includes_cls  -> MultiScaleBlock.forward concatenates the projected CLS with the
                             WHOLE token sequence of the other branch (its CLS token included)
                             instead of its patch tokens only
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IMG, IN_CH, NUM_CLASSES = 16, 3, 10
PATCH = (8, 4)
EMBED = (32, 16)
HEADS = (2, 2)
DEPTH = 2
MLP_RATIO = 2
EPS = 1e-6
BATCH = 2
OWN_BUGS = {"paddle_mlp_gelu_tanh", "paddle_kv_includes_cls"}
OTHER_BUGS = {"torch_patch_transposed", "torch_cross_scale_dim"}


class PatchEmbed(nn.Layer):
    def __init__(self, patch, dim):
        super().__init__()
        self.proj = nn.Conv2D(IN_CH, dim, patch, stride=patch, data_format="NCHW")

    def forward(self, x):
        x = self.proj(x)  # [B, D, H/p, W/p]
        return x.flatten(2).transpose([0, 2, 1])  # [B, N, D], row-major patch order


class Attention(nn.Layer):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.scale = self.head_dim**-0.5
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)

    def _split(self, t, b, n):
        return t.reshape([b, n, self.heads, self.head_dim]).transpose([0, 2, 1, 3])

    def forward(self, x):
        b, n, c = x.shape
        q = self._split(self.q_proj(x), b, n)
        k = self._split(self.k_proj(x), b, n)
        v = self._split(self.v_proj(x), b, n)
        attn = paddle.matmul(q, k, transpose_y=True) * self.scale
        attn = F.softmax(attn, axis=-1)
        out = paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([b, n, c])
        return self.proj(out)


class Mlp(nn.Layer):
    def __init__(self, dim, hidden, tanh_gelu=False):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU(approximate=tanh_gelu)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Layer):
    def __init__(self, dim, heads, tanh_gelu=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, epsilon=EPS)
        self.attn = Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim, epsilon=EPS)
        self.mlp = Mlp(dim, dim * MLP_RATIO, tanh_gelu)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class CrossAttention(nn.Layer):
    """Only the first token queries; keys / values come from the whole sequence."""

    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.scale = self.head_dim**-0.5
        self.wq = nn.Linear(dim, dim)
        self.wkv = nn.Linear(dim, 2 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        q = self.wq(x[:, 0:1]).reshape([b, 1, self.heads, self.head_dim]).transpose([0, 2, 1, 3])
        kv = self.wkv(x).reshape([b, n, 2, self.heads, self.head_dim]).transpose([2, 0, 3, 1, 4])
        k, v = kv[0], kv[1]
        attn = F.softmax(paddle.matmul(q, k, transpose_y=True) * self.scale, axis=-1)
        out = paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([b, 1, c])
        return self.proj(out)


class CrossAttentionBlock(nn.Layer):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, epsilon=EPS)
        self.attn = CrossAttention(dim, heads)

    def forward(self, x):
        return x[:, 0:1] + self.attn(self.norm1(x))


class MultiScaleBlock(nn.Layer):
    def __init__(self, tanh_gelu=False, kv_includes_cls=False):
        super().__init__()
        self.kv_includes_cls = kv_includes_cls
        nb = len(EMBED)
        self.blocks = nn.LayerList(
            [nn.Sequential(*[Block(EMBED[d], HEADS[d], tanh_gelu) for _ in range(DEPTH)]) for d in range(nb)]
        )
        self.projs = nn.LayerList()
        self.fusion = nn.LayerList()
        self.revert_projs = nn.LayerList()
        for d in range(nb):
            o = (d + 1) % nb
            self.projs.append(nn.Sequential(nn.LayerNorm(EMBED[d], epsilon=EPS), nn.GELU(), nn.Linear(EMBED[d], EMBED[o])))
            self.fusion.append(CrossAttentionBlock(EMBED[o], HEADS[o]))
            self.revert_projs.append(
                nn.Sequential(nn.LayerNorm(EMBED[o], epsilon=EPS), nn.GELU(), nn.Linear(EMBED[o], EMBED[d]))
            )

    def forward(self, xs):
        nb = len(xs)
        outs_b = [blk(x) for x, blk in zip(xs, self.blocks)]
        proj_cls = [proj(x[:, 0:1]) for x, proj in zip(outs_b, self.projs)]
        outs = []
        for i in range(nb):
            other = outs_b[(i + 1) % nb]
            ctx = other if self.kv_includes_cls else other[:, 1:]
            tmp = self.fusion[i](paddle.concat([proj_cls[i], ctx], axis=1))
            cls_back = self.revert_projs[i](tmp[:, 0:1])
            outs.append(paddle.concat([cls_back, outs_b[i][:, 1:]], axis=1))
        return outs


class CrossViT(nn.Layer):
    def __init__(self, tanh_gelu=False, kv_includes_cls=False):
        super().__init__()
        nb = len(EMBED)
        self.patch_embed = nn.LayerList([PatchEmbed(PATCH[d], EMBED[d]) for d in range(nb)])
        self.cls_token = nn.ParameterList([self.create_parameter([1, 1, EMBED[d]]) for d in range(nb)])
        self.pos_embed = nn.ParameterList(
            [self.create_parameter([1, 1 + (IMG // PATCH[d]) ** 2, EMBED[d]]) for d in range(nb)]
        )
        self.blocks = nn.LayerList([MultiScaleBlock(tanh_gelu, kv_includes_cls)])
        self.norm = nn.LayerList([nn.LayerNorm(EMBED[d], epsilon=EPS) for d in range(nb)])
        self.head = nn.LayerList([nn.Linear(EMBED[d], NUM_CLASSES) for d in range(nb)])

    def forward(self, x):
        b = x.shape[0]
        xs = []
        for d, embed in enumerate(self.patch_embed):
            tok = embed(x)
            cls = self.cls_token[d].expand([b, -1, -1])
            xs.append(paddle.concat([cls, tok], axis=1) + self.pos_embed[d])
        for blk in self.blocks:
            xs = blk(xs)
        logits = [self.head[d](self.norm[d](t)[:, 0]) for d, t in enumerate(xs)]
        return paddle.stack(logits, axis=0).mean(axis=0)


def _trained_look(m):
    rng = np.random.default_rng(2027)
    norms = set()
    for lname, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            norms.update({f"{lname}.weight", f"{lname}.bias"})
    for name, p in m.named_parameters():
        shape = tuple(p.shape)
        if name.startswith(("cls_token", "pos_embed")):
            val = rng.normal(0.0, 0.5, shape)
        elif name in norms:
            val = rng.uniform(0.7, 1.3, shape) if name.endswith("weight") else rng.normal(0.0, 0.1, shape)
        elif name.endswith("bias"):
            val = rng.normal(0.0, 0.05, shape)
        elif len(shape) == 4:  # conv kernel [D, C, p, p]
            val = rng.uniform(-1.0, 1.0, shape) / np.sqrt(np.prod(shape[1:]) / 3.0)
        else:  # Linear [in, out]
            val = rng.uniform(-1.0, 1.0, shape) * np.sqrt(3.0 / shape[0])
        p.set_value(val.astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_crossvit paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = CrossViT(tanh_gelu=bug == "paddle_mlp_gelu_tanh", kv_includes_cls=bug == "paddle_kv_includes_cls")
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(27)
    return rng.standard_normal((BATCH, IN_CH, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()
