"""Hand-written port, paddle side: a tiny Longformer-style encoder with sliding-window + global attention (written by "person A").

Inputs (positional): `input_ids` [2, 16] int64 (numpy rng seed 41, vocab 50) and
`global_attention_mask` [2, 16] int64, 1 on the global tokens: token 0 in both rows, plus token 9
(row 0) / token 12 (row 1). Output: the last hidden states [2, 16, 32].

Shared math: word + learned position embeddings -> LayerNorm (eps 1e-12); two post-LN layers
(hidden 32, 4 heads of 8, FFN 64 with erf GELU, LayerNorm eps 1e-12):
  - a LOCAL query i (not global) attends to the keys j with |i - j| <= 3 (window w = 3 on each
    side) plus every global token, all through the local projections q / k / v, scaled by 1/sqrt(8);
  - a GLOBAL query attends to all 16 tokens through the separate global projections
    q_g / k_g / v_g (scaled by 1/sqrt(8)); its row replaces the local one;
  - then the output projection, residual + LayerNorm, FFN, residual + LayerNorm.

Paddle idioms on this side:
- root `LongformerEncoder`: `word_emb`, `pos_emb`, `emb_norm` (directly on the root, no
  embeddings module) and `layers` (LayerList of `LocalGlobalBlock`, iterated).
- `LocalGlobalBlock` registers `attn` (`SlidingWindowAttention`), `norm1`, `fc1`, `fc2`, `norm2`;
  the residuals and F.gelu are inline in the block's forward.
- `SlidingWindowAttention` registers ONE packed local projection `qkv` nn.Linear(32, 96)
  (columns [q | k | v], head-major inside each part), then THREE SEPARATE global projections
  `query_global`, `key_global`, `value_global` nn.Linear(32, 32), then `out_proj`. The local
  attention is FULL [B, 4, 16, 16] scores with a BAND MASK (|i - j| <= w, or j global) applied by
  paddle.where(-inf); the global attention is computed for every row and the global rows are
  picked with paddle.where.
- model() gives the LayerNorms trained-looking weights / biases and every Linear bias nonzero
  values (seeded); the embeddings are Normal(0, 0.03) (so the embedding LayerNorm sees a small
  variance, as in a real checkpoint).

The torch side (port_longformer_local_torch.py) was written independently (HF style): an
embeddings module, separate local query / key / value, the keys and values UNFOLDED into
[2w + 1] windows, and the global attention in its own module with ONE packed `qkv_global`.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_band_off_by_one    -> the band mask keeps |i - j| < w instead of <= w (window 2, not 3)
  paddle_emb_ln_default_eps -> `emb_norm` is built without epsilon=1e-12, so paddle's default
                               1e-5 is used (precision-level; the block norms keep 1e-12)
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, SEQ, HIDDEN, HEADS, FFN = 50, 16, 32, 4, 64
HEAD_DIM = HIDDEN // HEADS
WINDOW = 3
N_LAYERS = 2
LN_EPS = 1e-12
BATCH = 2
GLOBAL_TOKENS = ((0, 9), (0, 12))
OWN_BUGS = {"paddle_band_off_by_one", "paddle_emb_ln_default_eps"}
OTHER_BUGS = {"torch_global_no_scale", "torch_unfold_pad_unmasked"}


class SlidingWindowAttention(nn.Layer):
    def __init__(self, hidden, heads, window, strict_band=False):
        super().__init__()
        self.heads, self.head_dim, self.window = heads, hidden // heads, window
        self.strict_band = strict_band
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.query_global = nn.Linear(hidden, hidden)
        self.key_global = nn.Linear(hidden, hidden)
        self.value_global = nn.Linear(hidden, hidden)
        self.out_proj = nn.Linear(hidden, hidden)

    def _heads(self, x):
        b, n, _ = x.shape
        return x.reshape([b, n, self.heads, self.head_dim]).transpose([0, 2, 1, 3])

    def forward(self, x, is_global):
        b, n, c = x.shape
        scale = 1.0 / math.sqrt(self.head_dim)
        q, k, v = [self._heads(t) for t in paddle.split(self.qkv(x), 3, axis=-1)]
        scores = paddle.matmul(q, k, transpose_y=True) * scale  # [B, H, N, N]
        pos = paddle.arange(n)
        dist = paddle.abs(pos.unsqueeze(1) - pos.unsqueeze(0))
        band = dist < self.window if self.strict_band else dist <= self.window
        allowed = paddle.logical_or(band.unsqueeze(0), is_global.unsqueeze(1))  # [B, N, N]
        scores = paddle.where(allowed.unsqueeze(1), scores, paddle.full_like(scores, float("-inf")))
        local = paddle.matmul(F.softmax(scores, axis=-1), v)
        # global queries: their own projections, every key
        qg = self._heads(self.query_global(x))
        kg = self._heads(self.key_global(x))
        vg = self._heads(self.value_global(x))
        g = paddle.matmul(F.softmax(paddle.matmul(qg, kg, transpose_y=True) * scale, axis=-1), vg)
        ctx = paddle.where(is_global.unsqueeze(1).unsqueeze(-1), g, local)  # [B, H, N, D]
        ctx = ctx.transpose([0, 2, 1, 3]).reshape([b, n, c])
        return self.out_proj(ctx)


class LocalGlobalBlock(nn.Layer):
    def __init__(self, strict_band=False):
        super().__init__()
        self.attn = SlidingWindowAttention(HIDDEN, HEADS, WINDOW, strict_band)
        self.norm1 = nn.LayerNorm(HIDDEN, epsilon=LN_EPS)
        self.fc1 = nn.Linear(HIDDEN, FFN)
        self.fc2 = nn.Linear(FFN, HIDDEN)
        self.norm2 = nn.LayerNorm(HIDDEN, epsilon=LN_EPS)

    def forward(self, x, is_global):
        x = self.norm1(x + self.attn(x, is_global))
        return self.norm2(x + self.fc2(F.gelu(self.fc1(x))))


class LongformerEncoder(nn.Layer):
    def __init__(self, strict_band=False, emb_default_eps=False):
        super().__init__()
        self.word_emb = nn.Embedding(VOCAB, HIDDEN)
        self.pos_emb = nn.Embedding(SEQ, HIDDEN)
        self.emb_norm = nn.LayerNorm(HIDDEN) if emb_default_eps else nn.LayerNorm(HIDDEN, epsilon=LN_EPS)
        self.layers = nn.LayerList([LocalGlobalBlock(strict_band) for _ in range(N_LAYERS)])

    def forward(self, input_ids, global_attention_mask):
        n = input_ids.shape[1]
        x = self.emb_norm(self.word_emb(input_ids) + self.pos_emb(paddle.arange(n)).unsqueeze(0))
        is_global = global_attention_mask > 0
        for layer in self.layers:
            x = layer(x, is_global)
        return x


def _trained_look(m):
    rng = np.random.default_rng(43)
    m.word_emb.weight.set_value(rng.normal(0.0, 0.03, m.word_emb.weight.shape).astype("float32"))
    m.pos_emb.weight.set_value(rng.normal(0.0, 0.03, m.pos_emb.weight.shape).astype("float32"))
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            layer.weight.set_value(rng.normal(1.0, 0.1, HIDDEN).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.05, HIDDEN).astype("float32"))
        elif isinstance(layer, nn.Linear):
            layer.bias.set_value(rng.normal(0.0, 0.05, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_longformer_local paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = LongformerEncoder(strict_band=bug == "paddle_band_off_by_one",
                          emb_default_eps=bug == "paddle_emb_ln_default_eps")
    _trained_look(m)
    m.eval()
    return m


def _arrays():
    rng = np.random.default_rng(41)
    ids = rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")
    mask = np.zeros((BATCH, SEQ), dtype="int64")
    for row, toks in enumerate(GLOBAL_TOKENS):
        mask[row, list(toks)] = 1
    return ids, mask


def inputs():
    ids, mask = _arrays()
    return (paddle.to_tensor(ids), paddle.to_tensor(mask)), {}


def loss(output):
    # last hidden states [2, 16, 32]
    return (output**2).mean()
