"""Hand-written port, paddle side: a tiny LambdaNetwork (LambdaResNet-style) classifier (written by "person A").

Input: one image batch [2, 3, 8, 8] (positional, NCHW, numpy rng seed 36, standard normal).
Output: logits [2, 10].

Network:
  stem   conv 3x3 (3 -> 16, pad 1, no bias) -> BN -> ReLU                     [2, 16, 8, 8]
  block0 lambda bottleneck, lambda layer with a LAMBDA CONV (r = 3), dim_u = 2 [2, 16, 8, 8]
  block1 lambda bottleneck, lambda layer with RELATIVE POSITION EMBEDDINGS
         (global context n = 8 x 8), dim_u = 1                               [2, 16, 8, 8]
  head   global average pool -> Linear(16, 10)
Bottleneck: conv1x1 -> BN -> ReLU -> lambda layer -> BN -> ReLU -> conv1x1 -> BN, + x, ReLU.

Lambda layer (Bello 2021, lucidrains layout), dim 16 -> 16, heads h = 4 (multi-query: the 4
query heads share keys / values), dim_k = 8, dim_v = 16 / 4 = 4, intra-depth u:
  q = BN(to_q(x)) channels (h k); k = to_k(x) channels (u k); v = BN(to_v(x)) channels (u v)
  k = softmax over the N = 64 positions
  content:  lambda_c[b, k, v] = sum_{u, m} k[b, u, k, m] v[b, u, v, m]
            Yc[b, h, v, n]    = sum_k q[b, h, k, n] lambda_c[b, k, v]
  position: lambda conv: lambda_p[b, k, v, n] = Conv3D(u -> k, kernel (1, r, r), bias)(v as
            [b, u, v, H, W]); or embeddings E[n, m, k, u] = rel_pos_emb[pos_m - pos_n + 7]
            (2-D offsets into a [15, 15, k, u] table), lambda_p[b, n, k, v] =
            sum_{u, m} E[n, m, k, u] v[b, u, v, m]
            Yp[b, h, v, n] = sum_k q[b, h, k, n] lambda_p[..]
  out = (Yc + Yp) as channels (h v).

Paddle idioms on this side ("[b, k, n]" layouts, positions last):
- root `LambdaResNet`: `stem_conv`, `stem_bn` (ReLU inline), `blocks` (LayerList, iterated, never
  called), `head` nn.Linear(16, 10); the global pool is an inline mean.
- `LambdaBlock` registers `conv_in`, `bn_in`, `lambda_layer`, `bn_mid`, `conv_out`, `bn_out`;
  ReLUs inline.
- `LambdaLayer` registers `to_q`, `to_k`, `to_v` (three 1x1 Conv2D, no bias), `norm_q`, `norm_v`
  (BatchNorm2D), then either `pos_conv` (nn.Conv3D(u, k, (1, 3, 3), padding (0, 1, 1))) or the
  parameter `rel_pos_emb` [15, 15, 8, 1] (Normal(0, 0.2)) plus an int64 buffer `rel_index` [64 * 64]
  (flat offsets into the 15 x 15 table, built in __init__); einsums in the [b, k, n] layout.
- model() gives every BN trained-looking affine weights (seeded) and running statistics
  calibrated on a separate seeded batch, layer by layer, then jittered.

The torch side (port_lambda_net_torch.py) was written independently: positions-first [b, n, k]
layouts, ONE fused qkv 1x1 conv per lambda layer, a [k, u, 15, 15] embedding indexed with a
[64, 64, 2] offset buffer, and the lambda conv as a 2-D conv over v folded into the batch.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_relpos_sign    -> the relative offset index is built as pos_n - pos_m instead of
                           pos_m - pos_n (every embedding lookup is point-mirrored)
  paddle_heads_inner    -> the lambda layer output is flattened as channels (v h) instead of
                           (h v) (a transpose before the final reshape)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

BATCH, IMG, DIM, NUM_CLASSES = 2, 8, 16, 10
HEADS, DIM_K = 4, 8
OWN_BUGS = {"paddle_relpos_sign", "paddle_heads_inner"}
OTHER_BUGS = {"torch_key_softmax_dim", "torch_keys_bf16"}


def rel_index(n, flip=False):
    """[n*n * n*n] int64: flat index into a (2n-1) x (2n-1) table for query n, key m."""
    ii, jj = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    pos = np.stack([ii.reshape(-1), jj.reshape(-1)], axis=1)  # [N, 2], pos[p] = (row, col)
    if flip:
        rel = pos[:, None, :] - pos[None, :, :]
    else:
        rel = pos[None, :, :] - pos[:, None, :]  # [n, m] -> pos_m - pos_n
    rel = rel + (n - 1)
    return (rel[..., 0] * (2 * n - 1) + rel[..., 1]).reshape(-1).astype("int64")


class LambdaLayer(nn.Layer):
    def __init__(self, dim, dim_out, dim_k, heads, dim_u, n=None, r=None, relpos_flip=False,
                 heads_inner=False):
        super().__init__()
        self.heads, self.dim_k, self.u = heads, dim_k, dim_u
        self.dim_v = dim_out // heads
        self.heads_inner = heads_inner
        self.to_q = nn.Conv2D(dim, dim_k * heads, 1, bias_attr=False)
        self.to_k = nn.Conv2D(dim, dim_k * dim_u, 1, bias_attr=False)
        self.to_v = nn.Conv2D(dim, self.dim_v * dim_u, 1, bias_attr=False)
        self.norm_q = nn.BatchNorm2D(dim_k * heads)
        self.norm_v = nn.BatchNorm2D(self.dim_v * dim_u)
        self.local = r is not None
        if self.local:
            self.pos_conv = nn.Conv3D(dim_u, dim_k, (1, r, r), padding=(0, r // 2, r // 2))
        else:
            self.n_rel = 2 * n - 1
            self.rel_pos_emb = self.create_parameter(
                [self.n_rel, self.n_rel, dim_k, dim_u],
                default_initializer=nn.initializer.Normal(0.0, 0.2))
            self.register_buffer("rel_index", paddle.to_tensor(rel_index(n, relpos_flip)))

    def forward(self, x):
        b, _, hh, ww = x.shape
        n_pos = hh * ww
        h, k_, u, v_ = self.heads, self.dim_k, self.u, self.dim_v
        q = self.norm_q(self.to_q(x)).reshape([b, h, k_, n_pos])
        k = self.to_k(x).reshape([b, u, k_, n_pos])
        v = self.norm_v(self.to_v(x)).reshape([b, u, v_, n_pos])
        k = F.softmax(k, axis=-1)
        lam_c = paddle.einsum("bukm,buvm->bkv", k, v)
        y_c = paddle.einsum("bhkn,bkv->bhvn", q, lam_c)
        if self.local:
            lam_p = self.pos_conv(v.reshape([b, u, v_, hh, ww])).reshape([b, k_, v_, n_pos])
            y_p = paddle.einsum("bhkn,bkvn->bhvn", q, lam_p)
        else:
            table = self.rel_pos_emb.reshape([self.n_rel * self.n_rel, k_, u])
            emb = paddle.gather(table, self.rel_index).reshape([n_pos, n_pos, k_, u])
            lam_p = paddle.einsum("nmku,buvm->bnkv", emb, v)
            y_p = paddle.einsum("bhkn,bnkv->bhvn", q, lam_p)
        y = y_c + y_p  # [b, h, v, n]
        if self.heads_inner:
            y = y.transpose([0, 2, 1, 3])
        return y.reshape([b, h * v_, hh, ww])


class LambdaBlock(nn.Layer):
    def __init__(self, dim, lam_kw):
        super().__init__()
        self.conv_in = nn.Conv2D(dim, dim, 1, bias_attr=False)
        self.bn_in = nn.BatchNorm2D(dim)
        self.lambda_layer = LambdaLayer(dim, dim, DIM_K, HEADS, **lam_kw)
        self.bn_mid = nn.BatchNorm2D(dim)
        self.conv_out = nn.Conv2D(dim, dim, 1, bias_attr=False)
        self.bn_out = nn.BatchNorm2D(dim)

    def forward(self, x):
        y = F.relu(self.bn_in(self.conv_in(x)))
        y = F.relu(self.bn_mid(self.lambda_layer(y)))
        y = self.bn_out(self.conv_out(y))
        return F.relu(x + y)


class LambdaResNet(nn.Layer):
    def __init__(self, relpos_flip=False, heads_inner=False):
        super().__init__()
        self.stem_conv = nn.Conv2D(3, DIM, 3, padding=1, bias_attr=False)
        self.stem_bn = nn.BatchNorm2D(DIM)
        self.blocks = nn.LayerList([
            LambdaBlock(DIM, {"dim_u": 2, "r": 3, "heads_inner": heads_inner}),
            LambdaBlock(DIM, {"dim_u": 1, "n": IMG, "relpos_flip": relpos_flip, "heads_inner": heads_inner}),
        ])
        self.head = nn.Linear(DIM, NUM_CLASSES)

    def forward(self, x):
        x = F.relu(self.stem_bn(self.stem_conv(x)))
        for blk in self.blocks:
            x = blk(x)
        return self.head(x.mean(axis=[2, 3]))


def _trained_look(m):
    """BN affine weights / biases trained-looking (seeded); running statistics calibrated on a
    separate seeded batch ("training data"), layer by layer, then jittered."""
    rng = np.random.default_rng(361)
    hooks = []

    def calibrate(layer, inp):
        x = inp[0].numpy().astype("float64")
        mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
        c = mean.shape[0]
        layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
        layer.bias.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
        layer._mean.set_value((mean + rng.normal(0.0, 0.1, c) * np.sqrt(var)).astype("float32"))
        layer._variance.set_value((var * rng.uniform(0.8, 1.25, c)).astype("float32"))

    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            hooks.append(layer.register_forward_pre_hook(calibrate))
    calib = np.random.default_rng(3601).standard_normal((8, 3, IMG, IMG)).astype("float32")
    m.eval()
    with paddle.no_grad():
        m(paddle.to_tensor(calib))
    for hk in hooks:
        hk.remove()


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_lambda_net paddle: unknown PADIFF_BUG {bug!r}")
    # the trained-looking values come from the CLEAN network (calibration included), then are
    # loaded into the one that is returned, so a planted bug changes nothing but its own code
    paddle.seed(0)
    clean = LambdaResNet()
    _trained_look(clean)
    paddle.seed(0)
    m = LambdaResNet(relpos_flip=bug == "paddle_relpos_sign", heads_inner=bug == "paddle_heads_inner")
    state = clean.state_dict()
    for name, buf in m.named_buffers():  # the index buffer is code, not a weight: keep this model's
        state[name] = buf
    m.set_state_dict(state)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(36)
    return rng.standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
