"""Hand-written port, paddle side: a tiny Swin-V2 style stage with a classifier (written by "person A").

Input: images [2, 3, 16, 16] (positional, NCHW, numpy rng seed 29, standard normal). Patch
embedding: 2x2 conv stride 2 (3 -> 32) + LayerNorm, giving an 8x8 token grid of width 32. One
stage of 2 Swin-V2 blocks, window 4 (16 tokens per window, 4 windows per image), 4 heads of 8,
MLP hidden 64 (exact erf GELU); block 0 is a plain window block, block 1 is shifted by 2 with
the standard 3x3-region attention mask (-100 between tokens of different regions). Then a final
LayerNorm, mean over the 64 tokens and a linear head to 10 classes: the output is [2, 10].

Swin-V2 block (post-norm residuals, the norm is applied to the branch output BEFORE adding):
  x = x + norm1(attn(x));  x = x + norm2(mlp(x))
Swin-V2 window attention (scaled cosine attention + continuous relative position bias):
  scores = normalize(q) . normalize(k)^T * exp(min(logit_scale_h, log(100)))
           + 16 * sigmoid(cpb(rel(i, j)))_h  (+ shift mask)
  rel(i, j) = (row_i - row_j, col_i - col_j) / (ws - 1) * 8, then sign(x) log2(1 + |x|) / log2(8)
  cpb = Linear(2, 64) -> ReLU -> Linear(64, 4, no bias)
LayerNorm eps 1e-5 everywhere.

Paddle idioms on this side:
- root `SwinV2Classifier` registers `patch_conv` (Conv2D 3 -> 32, k 2, s 2) and `patch_norm`
  (LayerNorm) DIRECTLY (no patch-embed sublayer), then `blocks` (LayerList of `SwinV2Block`,
  iterated), `norm`, `head`. Pooling is `mean(axis=1)` inline.
- `SwinV2Block` registers `attn`, `norm1`, `mlp`, `norm2`; roll / window partition / reverse are
  done inline with paddle.roll / reshape / transpose; the shift mask is built inline in the
  forward from a numpy helper (region ids, no buffer) and passed to `attn` as its second argument.
- `WindowAttentionV2`:
  - THREE separate projections: `q_proj` Linear(32, 32) WITH bias, `k_proj` Linear(32, 32,
    bias_attr=False), `v_proj` Linear(32, 32) WITH bias; then `out_proj`;
  - `logit_scale` is a parameter of shape [4] (one value per head), reshaped to [1, 4, 1, 1] in
    the forward and clipped with paddle.clip(max=log(100));
  - the continuous position bias MLP is two Linears `cpb_fc1` (2 -> 64) and `cpb_fc2` (64 -> 4,
    no bias) with F.relu inline, evaluated on the 256 (query, key) PAIRS of a window directly
    (a [256, 2] non-persistable buffer `pair_coords`, built in __init__) instead of on a
    49-entry table plus a gather: the values are identical;
  - F.normalize(axis=-1), F.softmax inline.
- `SwinV2Mlp`: `fc1`, `fc2`, F.gelu inline.
- model() gives every LayerNorm trained-looking weights / biases, every Linear / conv bias small
  non-zero values, and the per-head logit scales trained-looking values (seeded). Block 1 has one
  head whose learned logit scale (4.75) is above the clamp log(100) = 4.605, as happens in
  trained Swin-V2 checkpoints; block 0's four heads are all below it.

The torch side (port_swinv2_torch.py) was written independently, in the style of the official
Microsoft Swin-V2 code: packed qkv weight with q_bias / v_bias parameters, logit_scale stored
[heads, 1, 1], a 49-entry coordinate table + index buffers, nn.Sequential cpb_mlp, an attention
mask buffer, nn.GELU / nn.Softmax modules, nn.AdaptiveAvgPool1d.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_gelu_tanh            -> the MLP uses F.gelu(approximate=True) (tanh form) instead of the
                                 exact erf GELU (precision-level), in every block
  paddle_logit_scale_no_clamp -> the attention exponentiates logit_scale without clipping it at
                                 log(100), in every block (only block 1 has a head above the clamp)
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IMG, PATCH, IN_CH = 16, 2, 3
DIM, HEADS, HEAD_DIM = 32, 4, 8
WINDOW, SHIFT, DEPTH = 4, 2, 2
MLP_HIDDEN, CPB_HIDDEN, CLASSES = 64, 64, 10
GRID = IMG // PATCH
LN_EPS = 1e-5
BATCH = 2
OWN_BUGS = {"paddle_gelu_tanh", "paddle_logit_scale_no_clamp"}
OTHER_BUGS = {"torch_qkv_bias_order", "torch_unshift_wrong_way"}


def pair_coords(ws):
    """[ws*ws*ws*ws, 2] log-spaced relative coordinates of every (query, key) pair of a window."""
    rows, cols = np.divmod(np.arange(ws * ws), ws)
    rel = np.stack([rows[:, None] - rows[None, :], cols[:, None] - cols[None, :]], axis=-1).astype("float64")
    rel = rel / (ws - 1) * 8.0
    rel = np.sign(rel) * np.log2(np.abs(rel) + 1.0) / np.log2(8.0)
    return rel.reshape([-1, 2]).astype("float32")


def shift_mask(grid, ws, shift):
    """[n_windows, ws*ws, ws*ws] additive mask: -100 between tokens from different regions."""
    def region(i):
        return 0 if i < grid - ws else (1 if i < grid - shift else 2)

    ids = np.array([[region(r) * 3 + region(c) for c in range(grid)] for r in range(grid)])
    nw = grid // ws
    win = ids.reshape(nw, ws, nw, ws).transpose(0, 2, 1, 3).reshape(nw * nw, ws * ws)
    diff = win[:, :, None] != win[:, None, :]
    return np.where(diff, -100.0, 0.0).astype("float32")


class WindowAttentionV2(nn.Layer):
    def __init__(self, no_clamp=False):
        super().__init__()
        self.no_clamp = no_clamp
        self.q_proj = nn.Linear(DIM, DIM)
        self.k_proj = nn.Linear(DIM, DIM, bias_attr=False)
        self.v_proj = nn.Linear(DIM, DIM)
        self.logit_scale = self.create_parameter(
            [HEADS], default_initializer=nn.initializer.Constant(math.log(10.0)))
        self.cpb_fc1 = nn.Linear(2, CPB_HIDDEN)
        self.cpb_fc2 = nn.Linear(CPB_HIDDEN, HEADS, bias_attr=False)
        self.out_proj = nn.Linear(DIM, DIM)
        self.register_buffer("pair_coords", paddle.to_tensor(pair_coords(WINDOW)), persistable=False)

    def _heads(self, t):
        b, n, _ = t.shape
        return t.reshape([b, n, HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])

    def forward(self, x, mask=None):
        bw, n, _ = x.shape
        q = F.normalize(self._heads(self.q_proj(x)), axis=-1)
        k = F.normalize(self._heads(self.k_proj(x)), axis=-1)
        v = self._heads(self.v_proj(x))
        if self.no_clamp:
            scale = paddle.exp(self.logit_scale)
        else:
            scale = paddle.exp(paddle.clip(self.logit_scale, max=math.log(100.0)))
        scores = paddle.matmul(q, k, transpose_y=True) * scale.reshape([1, HEADS, 1, 1])
        bias = self.cpb_fc2(F.relu(self.cpb_fc1(self.pair_coords)))  # [n*n, heads]
        bias = 16.0 * F.sigmoid(bias.transpose([1, 0]).reshape([HEADS, n, n]))
        scores = scores + bias.unsqueeze(0)
        if mask is not None:
            nw = mask.shape[0]
            scores = scores.reshape([bw // nw, nw, HEADS, n, n]) + mask.unsqueeze(1).unsqueeze(0)
            scores = scores.reshape([bw, HEADS, n, n])
        attn = F.softmax(scores, axis=-1)
        out = paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([bw, n, DIM])
        return self.out_proj(out)


class SwinV2Mlp(nn.Layer):
    def __init__(self, tanh_gelu=False):
        super().__init__()
        self.tanh_gelu = tanh_gelu
        self.fc1 = nn.Linear(DIM, MLP_HIDDEN)
        self.fc2 = nn.Linear(MLP_HIDDEN, DIM)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x), approximate=self.tanh_gelu))


class SwinV2Block(nn.Layer):
    def __init__(self, shift, tanh_gelu=False, no_clamp=False):
        super().__init__()
        self.shift = shift
        self.attn = WindowAttentionV2(no_clamp)
        self.norm1 = nn.LayerNorm(DIM, epsilon=LN_EPS)
        self.mlp = SwinV2Mlp(tanh_gelu)
        self.norm2 = nn.LayerNorm(DIM, epsilon=LN_EPS)

    def forward(self, x):
        b, seq, c = x.shape
        h = x.reshape([b, GRID, GRID, c])
        if self.shift:
            h = paddle.roll(h, shifts=(-self.shift, -self.shift), axis=(1, 2))
        nw = GRID // WINDOW
        win = h.reshape([b, nw, WINDOW, nw, WINDOW, c]).transpose([0, 1, 3, 2, 4, 5])
        win = win.reshape([b * nw * nw, WINDOW * WINDOW, c])
        mask = paddle.to_tensor(shift_mask(GRID, WINDOW, self.shift)) if self.shift else None
        win = self.attn(win, mask)
        h = win.reshape([b, nw, nw, WINDOW, WINDOW, c]).transpose([0, 1, 3, 2, 4, 5]).reshape([b, GRID, GRID, c])
        if self.shift:
            h = paddle.roll(h, shifts=(self.shift, self.shift), axis=(1, 2))
        x = x + self.norm1(h.reshape([b, seq, c]))
        return x + self.norm2(self.mlp(x))


class SwinV2Classifier(nn.Layer):
    def __init__(self, tanh_gelu=False, no_clamp=False):
        super().__init__()
        self.patch_conv = nn.Conv2D(IN_CH, DIM, PATCH, stride=PATCH, data_format="NCHW")
        self.patch_norm = nn.LayerNorm(DIM, epsilon=LN_EPS)
        self.blocks = nn.LayerList(
            [SwinV2Block(0 if i % 2 == 0 else SHIFT, tanh_gelu, no_clamp) for i in range(DEPTH)])
        self.norm = nn.LayerNorm(DIM, epsilon=LN_EPS)
        self.head = nn.Linear(DIM, CLASSES)

    def forward(self, images):
        x = self.patch_conv(images)  # [B, 32, 8, 8]
        x = self.patch_norm(x.flatten(2).transpose([0, 2, 1]))  # [B, 64, 32]
        for blk in self.blocks:
            x = blk(x)
        x = self.norm(x).mean(axis=1)
        return self.head(x)


LOGIT_SCALES = ([1.9, 2.45, 3.1, 3.7], [2.2, 2.9, 3.5, 4.75])


def _trained_look(m):
    rng = np.random.default_rng(123)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            layer.weight.set_value(rng.uniform(0.6, 1.4, DIM).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.1, DIM).astype("float32"))
        elif isinstance(layer, (nn.Linear, nn.Conv2D)) and layer.bias is not None:
            layer.bias.set_value(rng.normal(0.0, 0.05, layer.bias.shape).astype("float32"))
    for blk, scales in zip(m.blocks, LOGIT_SCALES):
        blk.attn.logit_scale.set_value(np.array(scales, dtype="float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_swinv2 paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = SwinV2Classifier(tanh_gelu=bug == "paddle_gelu_tanh", no_clamp=bug == "paddle_logit_scale_no_clamp")
    _trained_look(m)
    m.eval()
    return m


def _images():
    rng = np.random.default_rng(29)
    return rng.standard_normal((BATCH, IN_CH, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_images()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()
