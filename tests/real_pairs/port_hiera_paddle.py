"""Hand-written port, paddle side: a tiny Hiera-style hierarchical ViT (written by "person A").

Input: images [2, 3, 32, 32] (positional, numpy rng seed 53, standard normal). Output: logits [2, 10].

    patch embed: Conv2D(3, 16, 4, stride 4) -> an 8 x 8 token grid, + a learned position
        embedding; the tokens are KEPT AS A SPATIAL MAP [B, H, W, C] throughout (no unroll)
    3 stages, depths (1, 2, 1), dims 16 / 32 / 64, heads 2 / 4 / 8 (head dim 8), MLP ratio 4,
    LayerNorm eps 1e-6, exact GELU; pre-norm blocks:
        stage 0, block 0 (8x8, dim 16): mask-unit attention (4 x 4-token windows, 4 windows)
        stage 1, block 0 (8x8 -> 4x4, 16 -> 32): q-pooling transition: the queries are max-pooled
            2x2 inside each 4 x 4 mask unit (mask-unit attention, lagging one block as in Hiera);
            the residual is shortcut_proj(ln1(x)) max-pooled 2x2
        stage 1, block 1 (4x4, dim 32): global attention
        stage 2, block 0 (4x4 -> 2x2, 32 -> 64): q-pooling transition, global attention
    head: mean over the 2 x 2 tokens, LayerNorm, Linear(64, 10)

Paddle idioms on this side:
- root `HieraNet`: registers `stem` (Conv2D, NCHW), `pos_embed` ([1, 8, 8, 16], create_parameter),
  `stages` (LayerList of `HieraStage`, each with a LayerList `blocks`), `norm`, `classifier`.
- `HieraBlock` registers `attn`, `ffn` BEFORE `ln1`, `ln2`, and (transition blocks only)
  `shortcut_proj`; the 2x2 max-pool of the shortcut is inline (F.max_pool2d, NHWC).
- `HieraAttention`: SEPARATE `q` (Linear dim -> dim_out) and packed `kv` (Linear dim ->
  2 dim_out, columns k | v) and `out`. It cuts its input map into windows itself
  (`_windows`: reshape [B, H/m, m, W/m, m, C] + transpose -> [B, nW, m, m, C]); global attention
  is the same code with one window covering the map; q-pooling is F.max_pool2d(2, 2, NHWC) over
  the window's m x m query grid; the windows are put back into a map after `out`.
- `FeedForward` (`ffn`): `linear1`, F.gelu inline, `linear2`.
- model() gives every tensor trained-looking values (seeded): LayerNorm scales 1 + N(0, 0.1),
  biases N(0, 0.1), matrices and the conv N(0, 0.2), position embedding N(0, 0.1).

The torch side (port_hiera_torch.py) was written independently in the official Hiera layout:
tokens unrolled ([B, N, C], mask units interleaved), a fused qkv, do_pool by view + max.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_window_no_transpose -> `_windows` reshapes [B, H/m, m, W/m, m, C] straight to
                                [B, nW, m, m, C] without swapping the axes, so every "mask unit"
                                is a strip of rows instead of a 4 x 4 block (all windowed blocks)
  paddle_gelu_tanh           -> the MLP uses F.gelu(approximate=True) (tanh approximation)
                                instead of the exact erf GELU (every block)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IMG, PATCH, IN_CH, NUM_CLASSES = 32, 4, 3, 10
EMBED_DIM, HEADS, DEPTHS, MLP_RATIO = 16, 2, (1, 2, 1), 4
MASK_UNIT = 4  # mask-unit side, in tokens of the 8 x 8 grid
MASK_UNIT_ATTN = (True, False, False)
LN_EPS = 1e-6
BATCH = 2
OWN_BUGS = {"paddle_window_no_transpose", "paddle_gelu_tanh"}
OTHER_BUGS = {"torch_qpool_coarse_stride", "torch_shortcut_unnormed"}


def _bug():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_hiera paddle: unknown PADIFF_BUG {bug!r}")
    return bug


def _pool2x2(x):
    """2x2 max-pool of a map [B, H, W, C] (channels last)."""
    return F.max_pool2d(x, kernel_size=2, stride=2, data_format="NHWC")


class HieraAttention(nn.Layer):
    def __init__(self, dim, dim_out, heads, unit, q_pool, window_bug=False):
        super().__init__()
        self.heads, self.head_dim = heads, dim_out // heads
        self.unit, self.q_pool, self.window_bug = unit, q_pool, window_bug  # unit None: global attention
        self.scale = self.head_dim ** -0.5
        self.q = nn.Linear(dim, dim_out)
        self.kv = nn.Linear(dim, 2 * dim_out)
        self.out = nn.Linear(dim_out, dim_out)

    def _windows(self, x, m):
        b, h, w, c = x.shape
        x = x.reshape([b, h // m, m, w // m, m, c])
        if not self.window_bug:
            x = x.transpose([0, 1, 3, 2, 4, 5])
        return x.reshape([b, (h // m) * (w // m), m, m, c])

    def forward(self, x):  # x: [B, H, W, C]
        b, h, w, _ = x.shape
        m = self.unit if self.unit is not None else h
        xw = self._windows(x, m)  # [B, nW, m, m, C]
        nw = xw.shape[1]
        q = self.q(xw)
        mq = m
        if self.q_pool:
            mq = m // 2
            c_q = q.shape[-1]
            q = _pool2x2(q.reshape([b * nw, m, m, c_q])).reshape([b, nw, mq, mq, c_q])
        q = q.reshape([b, nw, mq * mq, self.heads, self.head_dim]).transpose([0, 3, 1, 2, 4])  # [B, h, nW, Lq, d]
        kv = self.kv(xw).reshape([b, nw, m * m, 2, self.heads, self.head_dim]).transpose([3, 0, 4, 1, 2, 5])
        k, v = kv[0], kv[1]  # [B, h, nW, L, d]
        attn = F.softmax(paddle.matmul(q * self.scale, k, transpose_y=True), axis=-1)
        y = paddle.matmul(attn, v).transpose([0, 2, 3, 1, 4]).reshape([b, nw, mq * mq, -1])
        y = self.out(y)  # [B, nW, Lq, C_out]
        c_out = y.shape[-1]
        y = y.reshape([b, h // m, w // m, mq, mq, c_out]).transpose([0, 1, 3, 2, 4, 5])
        return y.reshape([b, (h // m) * mq, (w // m) * mq, c_out])


class FeedForward(nn.Layer):
    def __init__(self, dim, hidden, tanh_gelu=False):
        super().__init__()
        self.tanh_gelu = tanh_gelu
        self.linear1 = nn.Linear(dim, hidden)
        self.linear2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x), approximate=self.tanh_gelu))


class HieraBlock(nn.Layer):
    def __init__(self, dim, dim_out, heads, unit, q_pool, bug):
        super().__init__()
        self.attn = HieraAttention(dim, dim_out, heads, unit, q_pool, window_bug=bug == "paddle_window_no_transpose")
        self.ffn = FeedForward(dim_out, dim_out * MLP_RATIO, tanh_gelu=bug == "paddle_gelu_tanh")
        self.ln1 = nn.LayerNorm(dim, epsilon=LN_EPS)
        self.ln2 = nn.LayerNorm(dim_out, epsilon=LN_EPS)
        self.q_pool = q_pool
        if dim != dim_out:
            self.shortcut_proj = nn.Linear(dim, dim_out)

    def forward(self, x):
        x_norm = self.ln1(x)
        if self.q_pool:
            x = _pool2x2(self.shortcut_proj(x_norm))
        x = x + self.attn(x_norm)
        return x + self.ffn(self.ln2(x))


class HieraStage(nn.Layer):
    def __init__(self, blocks):
        super().__init__()
        self.blocks = nn.LayerList(blocks)

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return x


class HieraNet(nn.Layer):
    def __init__(self, bug=""):
        super().__init__()
        grid = IMG // PATCH
        self.stem = nn.Conv2D(IN_CH, EMBED_DIM, PATCH, stride=PATCH, data_format="NCHW")
        self.pos_embed = self.create_parameter([1, grid, grid, EMBED_DIM],
                                               default_initializer=nn.initializer.Constant(0.0))
        stages, dim, heads, unit = [], EMBED_DIM, HEADS, MASK_UNIT
        for s, depth in enumerate(DEPTHS):
            blocks = []
            for i in range(depth):
                if s > 0 and i == 0:  # transition: q-pool, widen; attention type lags one block
                    use_mu = MASK_UNIT_ATTN[s - 1]
                    blocks.append(HieraBlock(dim, dim * 2, heads * 2, unit if use_mu else None, True, bug))
                    dim, heads, unit = dim * 2, heads * 2, unit // 2
                else:
                    blocks.append(HieraBlock(dim, dim, heads, unit if MASK_UNIT_ATTN[s] else None, False, bug))
            stages.append(HieraStage(blocks))
        self.stages = nn.LayerList(stages)
        self.norm = nn.LayerNorm(dim, epsilon=LN_EPS)
        self.classifier = nn.Linear(dim, NUM_CLASSES)

    def forward(self, images):
        x = self.stem(images).transpose([0, 2, 3, 1])  # [B, 8, 8, 16]
        x = x + self.pos_embed
        for stage in self.stages:
            x = stage(x)
        return self.classifier(self.norm(x.mean(axis=[1, 2])))


def _trained_look(m):
    rng = np.random.default_rng(5301)
    for name, p in m.named_parameters():
        if name == "pos_embed":
            v = rng.normal(0.0, 0.1, p.shape)
        elif p.ndim >= 2:
            v = rng.normal(0.0, 0.2, p.shape)
        elif name.endswith("bias"):
            v = rng.normal(0.0, 0.1, p.shape)
        else:  # LayerNorm scales
            v = 1.0 + rng.normal(0.0, 0.1, p.shape)
        p.set_value(v.astype("float32"))


def model():
    bug = _bug()
    paddle.seed(0)
    m = HieraNet(bug)
    _trained_look(m)
    m.eval()
    return m


def _images():
    return np.random.default_rng(53).standard_normal((BATCH, IN_CH, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_images()),), {}


def loss(output):
    return (output ** 2).mean()
