"""Hand-written port, paddle side: a tiny MViTv2-style classifier with pooling attention (written by "person A").

Input: one positional image [2, 3, 16, 16] (NCHW, numpy rng seed 48, standard normal). Output:
logits [2, 10].

Architecture (shared with the torch side):
- patch embedding: conv 3 -> 16, kernel 3, stride 2, padding 1 -> an 8 x 8 grid of 16 channels;
- stage 1 (width 16, 2 heads of 8): one block, query stride 1, key / value stride 2
  (queries 8 x 8 = 64, keys 4 x 4 = 16);
- stage 2 (width 32, 4 heads of 8): a transition block 16 -> 32 with query stride 2 and
  key / value stride 1 (queries 4 x 4, keys 8 x 8; the channel growth happens inside the
  attention: q / k / v are projected straight to 32), then one block 32 -> 32 with strides 1 / 1
  on the 4 x 4 grid;
- final LayerNorm (eps 1e-6), mean over the grid, linear head 32 -> 10.

One block (MViTv2, pre-norm, "dim_mul_in_att"):
  xn = LN1(x); a = PoolingAttention(xn)
  shortcut = x, or proj(xn) when the width grows; max-pool 3x3 / stride 2 / pad 1 when the query
  is pooled; x = shortcut + a; x = x + MLP(LN2(x)) (fc1 -> exact GELU -> fc2, ratio 4).
PoolingAttention: q, k, v projections (with bias); each is split into heads and pooled by a 3x3
depthwise conv (padding 1, stride = its stride, no bias, shared by all heads) followed by a
LayerNorm over the head dim (eps 1e-6); scores = (q * hd^-0.5) k^T + decomposed relative
position bias; softmax; out = attn v + q (residual pooling); output projection.
Decomposed relative position bias (MViTv2): for query cell (i, j) and key cell (m, n),
  bias = q_ij . Rh[dist_h(i, m)] + q_ij . Rw[dist_w(j, n)], with q the pooled, normalised,
  UNSCALED query and dist(i, m) = i * max(k/q, 1) - m * max(q/k, 1) + (k - 1) * max(q/k, 1).

Paddle idioms on this side ("person A" keeps everything NCHW):
- root `MViTv2Tiny`: `patch_embed` Conv2D, `stages` = LayerList of `MViTStage` (each with its own
  `blocks` LayerList, iterated), `norm` (ChannelsFirstLayerNorm), `head` nn.Linear.
- Activations between blocks are NCHW maps [B, C, H, W]; the norms are a hand-written
  channels-first LayerNorm (create_parameter weight / bias, mean / variance over axis 1) and all
  token-wise linear maps are 1x1 Conv2D (q / k / v, output projection, MLP fc1 / fc2, shortcut).
- `PoolingAttention` registers its poolers `pool_q`, `pool_k`, `pool_v` (an `AttentionPool`
  LAYER each: `conv` depthwise Conv2D + `norm` nn.LayerNorm) and `rel_bias` (a
  `DecomposedRelPosBias` layer with ONE packed table parameter [2, L, hd]: row 0 height, row 1
  width) BEFORE its projections `to_q`, `to_k`, `to_v` (separate 1x1 convs) and `out_proj`.
  The relative distances are numpy index arrays built in __init__.
- `MViTBlock`: `norm1`, `attn`, `norm2`, `mlp` (`ConvMlp`: fc1, fc2, F.gelu inline), then
  `shortcut_proj` in the transition block; the shortcut max-pool is F.max_pool2d inline.
- model() gives every norm trained-looking weights / biases, every bias a non-zero value and the
  relative-position tables N(0, 0.3) values (rng seed 48), so that nothing is an identity.

The torch side (port_mvit_torch.py) was written independently (facebookresearch/mvit style):
token-major [B, N, C] activations, ONE fused qkv Linear, the pooling done inline by a helper
function on the attention's own conv / LayerNorm children, two separate rel_pos_h / rel_pos_w
tables, a flat `blocks` ModuleList and an nn.MaxPool2d `pool_skip` module.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_relpos_hw_swapped -> DecomposedRelPosBias reads the packed table the wrong way round:
                              the height term gathers from row 1 (width) and the width term from
                              row 0 (height), in every attention
  paddle_gelu_tanh         -> ConvMlp uses F.gelu(approximate=True) (tanh form) instead of the
                              exact erf GELU, in every block (precision-level)
"""

import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IMG, IN_CH, PATCH_CH, N_CLASSES = 16, 3, 16, 10
LN_EPS = 1e-6
MLP_RATIO = 4
BATCH = 2
# (dim_in, dim_out, heads, input grid side, q stride, kv stride) per block, per stage
STAGES = [
    [(16, 16, 2, 8, 1, 2)],
    [(16, 32, 4, 8, 2, 1), (32, 32, 4, 4, 1, 1)],
]
OWN_BUGS = {"paddle_relpos_hw_swapped", "paddle_gelu_tanh"}
OTHER_BUGS = {"torch_q_scaled_early", "torch_skip_pool_kernel2"}


class ChannelsFirstLayerNorm(nn.Layer):
    """LayerNorm over the channel axis of an NCHW map."""

    def __init__(self, channels, epsilon=LN_EPS):
        super().__init__()
        self.epsilon = epsilon
        self.weight = self.create_parameter([channels], default_initializer=nn.initializer.Constant(1.0))
        self.bias = self.create_parameter([channels], is_bias=True)

    def forward(self, x):
        mu = x.mean(axis=1, keepdim=True)
        var = ((x - mu) ** 2).mean(axis=1, keepdim=True)
        x = (x - mu) / paddle.sqrt(var + self.epsilon)
        return x * self.weight.reshape([1, -1, 1, 1]) + self.bias.reshape([1, -1, 1, 1])


class AttentionPool(nn.Layer):
    """[B, heads * hd, H, W] map -> pooled, normalised head tokens [B, heads, H' * W', hd]."""

    def __init__(self, heads, head_dim, stride):
        super().__init__()
        self.heads = heads
        self.conv = nn.Conv2D(head_dim, head_dim, 3, stride=stride, padding=1, groups=head_dim, bias_attr=False, data_format="NCHW")
        self.norm = nn.LayerNorm(head_dim, epsilon=LN_EPS)

    def forward(self, x):
        b, c, h, w = x.shape
        hd = c // self.heads
        x = self.conv(x.reshape([b * self.heads, hd, h, w]))
        ph, pw = x.shape[2], x.shape[3]
        x = x.reshape([b, self.heads, hd, ph * pw]).transpose([0, 1, 3, 2])
        return self.norm(x)


def _rel_index(q_size, k_size):
    q_ratio = max(k_size / q_size, 1.0)
    k_ratio = max(q_size / k_size, 1.0)
    dist = np.arange(q_size)[:, None] * q_ratio - np.arange(k_size)[None, :] * k_ratio
    dist = dist + (k_size - 1) * k_ratio
    return dist.astype("int64")  # [q_size, k_size]


class DecomposedRelPosBias(nn.Layer):
    """MViTv2 decomposed relative position bias from the (unscaled) pooled query."""

    def __init__(self, q_size, k_size, head_dim, swap_hw=False):
        super().__init__()
        self.q_size, self.k_size, self.head_dim = q_size, k_size, head_dim
        length = 2 * max(q_size, k_size) - 1
        self.table = self.create_parameter([2, length, head_dim], default_initializer=nn.initializer.TruncatedNormal(std=0.02))
        self.index = _rel_index(q_size, k_size)  # square grid: the same distances for h and w
        self.swap_hw = swap_hw

    def forward(self, q):
        b, n_heads, _, hd = q.shape
        qs, ks = self.q_size, self.k_size
        idx = paddle.to_tensor(self.index.reshape([-1]))
        row_h, row_w = (1, 0) if self.swap_hw else (0, 1)
        r_h = paddle.gather(self.table[row_h], idx).reshape([qs, ks, hd])
        r_w = paddle.gather(self.table[row_w], idx).reshape([qs, ks, hd])
        grid_q = q.reshape([b, n_heads, qs, qs, hd])
        rel_h = paddle.einsum("bnhwc,hkc->bnhwk", grid_q, r_h)  # [b, n, qh, qw, kh]
        rel_w = paddle.einsum("bnhwc,wkc->bnhwk", grid_q, r_w)  # [b, n, qh, qw, kw]
        bias = rel_h.unsqueeze(-1) + rel_w.unsqueeze(-2)  # [b, n, qh, qw, kh, kw]
        return bias.reshape([b, n_heads, qs * qs, ks * ks])


class PoolingAttention(nn.Layer):
    def __init__(self, dim_in, dim_out, heads, size, q_stride, kv_stride, swap_hw=False):
        super().__init__()
        self.heads = heads
        hd = dim_out // heads
        self.scale = hd**-0.5
        self.q_side = (size + 2 - 3) // q_stride + 1
        self.pool_q = AttentionPool(heads, hd, q_stride)
        self.pool_k = AttentionPool(heads, hd, kv_stride)
        self.pool_v = AttentionPool(heads, hd, kv_stride)
        self.rel_bias = DecomposedRelPosBias(self.q_side, (size + 2 - 3) // kv_stride + 1, hd, swap_hw)
        self.to_q = nn.Conv2D(dim_in, dim_out, 1, data_format="NCHW")
        self.to_k = nn.Conv2D(dim_in, dim_out, 1, data_format="NCHW")
        self.to_v = nn.Conv2D(dim_in, dim_out, 1, data_format="NCHW")
        self.out_proj = nn.Conv2D(dim_out, dim_out, 1, data_format="NCHW")

    def forward(self, x):
        q = self.pool_q(self.to_q(x))  # [B, heads, Nq, hd]
        k = self.pool_k(self.to_k(x))  # [B, heads, Nk, hd]
        v = self.pool_v(self.to_v(x))
        scores = paddle.matmul(q * self.scale, k, transpose_y=True) + self.rel_bias(q)
        attn = F.softmax(scores, axis=-1)
        out = paddle.matmul(attn, v) + q  # residual pooling
        b, n_heads, _, hd = out.shape
        out = out.transpose([0, 1, 3, 2]).reshape([b, n_heads * hd, self.q_side, self.q_side])
        return self.out_proj(out)


class ConvMlp(nn.Layer):
    def __init__(self, dim, hidden, tanh_gelu=False):
        super().__init__()
        self.tanh_gelu = tanh_gelu
        self.fc1 = nn.Conv2D(dim, hidden, 1, data_format="NCHW")
        self.fc2 = nn.Conv2D(hidden, dim, 1, data_format="NCHW")

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x), approximate=self.tanh_gelu))


class MViTBlock(nn.Layer):
    def __init__(self, dim_in, dim_out, heads, size, q_stride, kv_stride, bug=""):
        super().__init__()
        self.q_stride = q_stride
        self.norm1 = ChannelsFirstLayerNorm(dim_in)
        self.attn = PoolingAttention(dim_in, dim_out, heads, size, q_stride, kv_stride, swap_hw=bug == "paddle_relpos_hw_swapped")
        self.norm2 = ChannelsFirstLayerNorm(dim_out)
        self.mlp = ConvMlp(dim_out, dim_out * MLP_RATIO, tanh_gelu=bug == "paddle_gelu_tanh")
        self.shortcut_proj = nn.Conv2D(dim_in, dim_out, 1, data_format="NCHW") if dim_in != dim_out else None

    def forward(self, x):
        xn = self.norm1(x)
        a = self.attn(xn)
        if self.shortcut_proj is not None:
            x = self.shortcut_proj(xn)
        if self.q_stride > 1:
            x = F.max_pool2d(x, kernel_size=self.q_stride + 1, stride=self.q_stride, padding=1)
        x = x + a
        return x + self.mlp(self.norm2(x))


class MViTStage(nn.Layer):
    def __init__(self, cfgs, bug=""):
        super().__init__()
        self.blocks = nn.LayerList([MViTBlock(*cfg, bug=bug) for cfg in cfgs])

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return x


class MViTv2Tiny(nn.Layer):
    def __init__(self, bug=""):
        super().__init__()
        self.patch_embed = nn.Conv2D(IN_CH, PATCH_CH, 3, stride=2, padding=1, data_format="NCHW")
        self.stages = nn.LayerList([MViTStage(cfgs, bug) for cfgs in STAGES])
        width = STAGES[-1][-1][1]
        self.norm = ChannelsFirstLayerNorm(width)
        self.head = nn.Linear(width, N_CLASSES)

    def forward(self, img):
        x = self.patch_embed(img)  # [B, 16, 8, 8]
        for stage in self.stages:
            x = stage(x)
        x = self.norm(x).mean(axis=[2, 3])  # [B, 32]
        return self.head(x)


def _trained_look(m):
    rng = np.random.default_rng(48)
    for name, p in m.named_parameters():
        if name.endswith("table"):
            p.set_value(rng.normal(0.0, 0.3, p.shape).astype("float32"))
        elif name.endswith("norm.weight") or name.endswith("norm1.weight") or name.endswith("norm2.weight"):
            p.set_value(rng.uniform(0.6, 1.4, p.shape).astype("float32"))
        elif name.endswith("bias"):
            p.set_value(rng.normal(0.0, 0.1, p.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_mvit paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = MViTv2Tiny(bug=bug if bug in OWN_BUGS else "")
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(48)
    return rng.standard_normal((BATCH, IN_CH, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()
