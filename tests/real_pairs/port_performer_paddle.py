"""Hand-written port, paddle side: a small Performer (FAVOR+ linear attention) text classifier (written by "person A").

Inputs (positional): `input_ids` [2, 16] int64 (numpy rng seed 31, ids 1..63) and
`attention_mask` [2, 16] int64 (sample 0: all 16 tokens real; sample 1: the last 5 are padding,
id 0). Output: class logits [2, 5].

Sizes: vocab 64, width 32, 2 heads of 16, 24 random features per head, FFN hidden 64 (exact
GELU), 2 pre-norm layers (LayerNorm eps 1e-5), a final LayerNorm, masked mean pooling over the
real tokens and a Linear(32, 5) classifier.

FAVOR+ (non-causal, positive random features, Choromanski et al. 2021), per head, with
x = q or k [B, H, N, 16], omega = the fixed [m = 24, d = 16] Gaussian feature matrix:
  phi(x) = m^-1/2 * exp(omega (d^-1/4 x) - |d^-1/4 x|^2 / 2 - stab)
  out_i  = phi(q_i) . sum_j phi(k_j) v_j^T  /  phi(q_i) . sum_j phi(k_j)
The padding mask zeroes phi(k_j) of padded keys. `stab` is any constant that cancels between
numerator and denominator: on this side the max of (projection - |x|^2 / 2) over the features of
each QUERY token, and over all tokens and features of each (sample, head) for the KEYS.

Paddle idioms on this side:
- root `PerformerClassifier`: `word_embeddings` nn.Embedding(64, 32), `position_embeddings`
  [1, 16, 32] (create_parameter), `layers` LayerList of `PerformerLayer` (iterated),
  `final_norm`, `classifier` Linear(32, 5). The masked mean pooling is inline in the forward.
- `PerformerLayer`: `norm1`, `attn` (`FavorAttention`), `norm2`, `ffn` (`FeedForward`: `fc1`,
  `fc2`, F.gelu inline).
- `FavorAttention`: ONE fused `qkv` Linear(32, 96) (columns [q | k | v], heads contiguous
  inside each part), a `feature_map` child (`PositiveRandomFeatures`, called twice per forward:
  queries first, then keys) and `out_proj`.
- `PositiveRandomFeatures` owns the fixed projection as a buffer `omega` [m, d] = [24, 16],
  ONE PER LAYER, drawn from numpy (seed 100 + layer index) by model().
- model() gives the LayerNorms trained-looking weights / biases (seeded), so nothing is an
  identity.

The torch side (port_performer_torch.py) was written independently (performer-pytorch style).

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_kernel_eps    -> PositiveRandomFeatures adds performer-pytorch's kernel_epsilon 1e-4
                          to exp(...) before the m^-1/2 ratio (precision-level)
  paddle_mask_values   -> FavorAttention zeroes the padded VALUES instead of the padded key
                          features, so padded keys still count in the denominator
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, MAX_LEN, HIDDEN, N_HEADS, N_FEATURES, FFN_HIDDEN, N_LAYERS, N_CLASSES = 64, 16, 32, 2, 24, 64, 2, 5
HEAD_DIM = HIDDEN // N_HEADS
LN_EPS = 1e-5
BATCH, SEQ, N_PAD = 2, 16, 5
OWN_BUGS = {"paddle_kernel_eps", "paddle_mask_values"}
OTHER_BUGS = {"torch_key_stab_per_token", "torch_ff_relu"}


class PositiveRandomFeatures(nn.Layer):
    """phi(x) for x [B, H, N, d] -> [B, H, N, m]."""

    def __init__(self, head_dim, n_features, kernel_eps=0.0):
        super().__init__()
        self.head_dim, self.n_features, self.kernel_eps = head_dim, n_features, kernel_eps
        self.register_buffer("omega", paddle.zeros([n_features, head_dim], dtype="float32"))

    def forward(self, x, is_query):
        x = x * (self.head_dim ** -0.25)
        proj = paddle.matmul(x, self.omega, transpose_y=True)  # [B, H, N, m]
        logits = proj - 0.5 * paddle.sum(x * x, axis=-1, keepdim=True)
        if is_query:
            stab = paddle.max(logits, axis=-1, keepdim=True)
        else:
            stab = paddle.max(logits, axis=[2, 3], keepdim=True)
        return (paddle.exp(logits - stab) + self.kernel_eps) / math.sqrt(self.n_features)


class FavorAttention(nn.Layer):
    def __init__(self, kernel_eps=0.0, mask_values=False):
        super().__init__()
        self.mask_values = mask_values
        self.qkv = nn.Linear(HIDDEN, 3 * HIDDEN)
        self.feature_map = PositiveRandomFeatures(HEAD_DIM, N_FEATURES, kernel_eps)
        self.out_proj = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, x, key_mask):
        b, n, _ = x.shape
        qkv = self.qkv(x).reshape([b, n, 3, N_HEADS, HEAD_DIM]).transpose([2, 0, 3, 1, 4])
        q, k, v = qkv[0], qkv[1], qkv[2]  # [B, H, N, d]
        q_feat = self.feature_map(q, is_query=True)
        k_feat = self.feature_map(k, is_query=False)
        m = key_mask.astype(x.dtype).reshape([b, 1, n, 1])
        if self.mask_values:
            v = v * m
        else:
            k_feat = k_feat * m
        kv = paddle.matmul(k_feat, v, transpose_x=True)  # [B, H, m, d]
        k_sum = paddle.sum(k_feat, axis=2, keepdim=True)  # [B, H, 1, m]
        denom = paddle.sum(q_feat * k_sum, axis=-1, keepdim=True)  # [B, H, N, 1]
        out = paddle.matmul(q_feat, kv) / denom
        out = out.transpose([0, 2, 1, 3]).reshape([b, n, HIDDEN])
        return self.out_proj(out)


class FeedForward(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(HIDDEN, FFN_HIDDEN)
        self.fc2 = nn.Linear(FFN_HIDDEN, HIDDEN)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class PerformerLayer(nn.Layer):
    def __init__(self, kernel_eps=0.0, mask_values=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(HIDDEN, epsilon=LN_EPS)
        self.attn = FavorAttention(kernel_eps, mask_values)
        self.norm2 = nn.LayerNorm(HIDDEN, epsilon=LN_EPS)
        self.ffn = FeedForward()

    def forward(self, x, key_mask):
        x = x + self.attn(self.norm1(x), key_mask)
        return x + self.ffn(self.norm2(x))


class PerformerClassifier(nn.Layer):
    def __init__(self, kernel_eps=0.0, mask_values=False):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB, HIDDEN)
        self.position_embeddings = self.create_parameter(
            [1, MAX_LEN, HIDDEN], default_initializer=nn.initializer.Normal(0.0, 0.02))
        self.layers = nn.LayerList([PerformerLayer(kernel_eps, mask_values) for _ in range(N_LAYERS)])
        self.final_norm = nn.LayerNorm(HIDDEN, epsilon=LN_EPS)
        self.classifier = nn.Linear(HIDDEN, N_CLASSES)

    def forward(self, input_ids, attention_mask):
        n = input_ids.shape[1]
        h = self.word_embeddings(input_ids) + self.position_embeddings[:, :n]
        for layer in self.layers:
            h = layer(h, attention_mask)
        h = self.final_norm(h)
        w = attention_mask.astype(h.dtype).unsqueeze(-1)  # [B, N, 1]
        pooled = paddle.sum(h * w, axis=1) / paddle.sum(w, axis=1)
        return self.classifier(pooled)


def _trained_look(m):
    rng = np.random.default_rng(41)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            layer.weight.set_value(rng.normal(1.0, 0.15, HIDDEN).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.1, HIDDEN).astype("float32"))
    for i, layer in enumerate(m.layers):
        omega = np.random.default_rng(100 + i).standard_normal((N_FEATURES, HEAD_DIM))
        layer.attn.feature_map.omega.set_value(omega.astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_performer paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = PerformerClassifier(kernel_eps=1e-4 if bug == "paddle_kernel_eps" else 0.0,
                            mask_values=bug == "paddle_mask_values")
    _trained_look(m)
    m.eval()
    return m


def _arrays():
    rng = np.random.default_rng(31)
    ids = rng.integers(1, VOCAB, size=(BATCH, SEQ)).astype("int64")
    mask = np.ones((BATCH, SEQ), dtype="int64")
    mask[1, SEQ - N_PAD:] = 0
    ids[mask == 0] = 0
    return ids, mask


def inputs():
    ids, mask = _arrays()
    return (paddle.to_tensor(ids), paddle.to_tensor(mask)), {}


def loss(output):
    # class logits [2, 5]
    return (output**2).mean()
