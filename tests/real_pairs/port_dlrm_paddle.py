"""Hand-written port, paddle side: a tiny DLRM-style click-through-rate model (written by "person A").

Sizes: batch 2; 4 dense features; 3 sparse categorical features (tables of 20, 30 and 12 rows,
embedding dim 8) given as multi-hot bags of different lengths per sample; bottom MLP 4 -> 16 -> 8
(ReLU after both layers); dot-product interaction of the 4 vectors (dense + 3 pooled bags):
the 6 strictly-lower-triangle dot products, concatenated after the dense vector (8 + 6 = 14);
top MLP 14 -> 16 -> 8 -> 1 (ReLU between), sigmoid. Eval mode, fp32.

Inputs (identical on both sides): `dense_x` [2, 4] float32 and `sparse_ids` [2, 3, 4] int64,
each bag padded with -1 to 4 ids. Bag lengths per (sample, feature): feature 0: 3, 1;
feature 1: 2, 4; feature 2: 0 (an empty bag), 2. Output: click probability [2, 1].

Paddle idioms on this side (paddle has no EmbeddingBag):
- root `DLRM` registers `top_mlp` (LayerList of 3 Linears, ReLU via F.relu inline, F.sigmoid
  inline) FIRST, then `bottom_mlp` (`DenseArch`: fc1, fc2, F.relu inline), then the three
  tables as NAMED attributes `site_emb`, `app_emb`, `device_emb`, then `interaction`.
- each table is a `BagEmbedding`: an nn.Embedding(rows + 1, 8, padding_idx=rows) — one extra
  padding row at the END, zero and never looked up as data; the -1 pads of the bag are mapped to
  that row with paddle.where, the rows are looked up as [B, L, 8] and summed over the bag axis.
  Tables are initialised DLRM-style, Uniform(-sqrt(1 / rows), sqrt(1 / rows)); every Linear
  too (`_linear`: W ~ N(0, sqrt(2 / (in + out))), b ~ N(0, sqrt(1 / out))).
- `interaction` (`DotInteraction`) takes (dense [B, 8], pooled [B, 3, 8]), builds
  T = concat(dense, pooled) [B, 4, 8], Z = matmul(T, T, transpose_y=True) and selects the
  strictly lower triangle with paddle.masked_select and a tril mask (row-major order).

The torch side (port_dlrm_torch.py) was written independently, in the style of the reference
facebookresearch/dlrm code: nn.EmbeddingBag(mode="sum") tables in a ModuleList `emb_l` fed with
(flat indices, offsets), nn.Sequential `bot_l` / `top_l`, tril index gather.

PADIFF_BUG=paddle_interaction_dense_last plants this side's bug: the interaction stacks the
pooled embeddings FIRST and the dense vector LAST (T = concat(pooled, dense)), so the same 6 dot
products come out in a different order and the top MLP's weights meet the wrong pairs. The torch
side's bug names are accepted and ignored; any other name raises ValueError.
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

BATCH, DENSE, DIM, BAG = 2, 4, 8, 4
TABLE_ROWS = (20, 30, 12)  # site, app, device
BOTTOM = (DENSE, 16, DIM)
TOP = (DIM + 6, 16, 8, 1)
OWN_BUGS = {"paddle_interaction_dense_last"}
OTHER_BUGS = {"torch_bag_default_mean", "torch_top_mlp_autocast_fp16"}


def _linear(n_in, n_out):
    """Linear with the reference DLRM init: W ~ N(0, sqrt(2 / (in + out))), b ~ N(0, sqrt(1 / out))."""
    return nn.Linear(n_in, n_out, weight_attr=nn.initializer.Normal(0.0, math.sqrt(2.0 / (n_in + n_out))),
                     bias_attr=nn.initializer.Normal(0.0, math.sqrt(1.0 / n_out)))


class BagEmbedding(nn.Layer):
    """Sum-pooled multi-hot lookup: ids [B, L] padded with -1 -> [B, dim]."""

    def __init__(self, rows, dim):
        super().__init__()
        self.rows = rows
        bound = math.sqrt(1.0 / rows)
        self.embedding = nn.Embedding(rows + 1, dim, padding_idx=rows,
                                      weight_attr=nn.initializer.Uniform(-bound, bound))

    def forward(self, ids):
        ids = paddle.where(ids < 0, paddle.full_like(ids, self.rows), ids)
        return self.embedding(ids).sum(axis=1)


class DenseArch(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = _linear(BOTTOM[0], BOTTOM[1])
        self.fc2 = _linear(BOTTOM[1], BOTTOM[2])

    def forward(self, x):
        return F.relu(self.fc2(F.relu(self.fc1(x))))


class DotInteraction(nn.Layer):
    def __init__(self, num_vectors, dense_last=False):
        super().__init__()
        self.dense_last = dense_last
        self.tril = np.tril(np.ones((num_vectors, num_vectors), dtype=bool), -1)

    def forward(self, dense, pooled):
        d = dense.unsqueeze(1)
        t = paddle.concat([pooled, d] if self.dense_last else [d, pooled], axis=1)  # [B, 4, dim]
        z = paddle.matmul(t, t, transpose_y=True)  # [B, 4, 4]
        mask = paddle.to_tensor(self.tril).expand_as(z)
        pairs = paddle.masked_select(z, mask).reshape([z.shape[0], -1])  # [B, 6]
        return paddle.concat([dense, pairs], axis=1)


class DLRM(nn.Layer):
    def __init__(self, dense_last=False):
        super().__init__()
        self.top_mlp = nn.LayerList([_linear(a, b) for a, b in zip(TOP[:-1], TOP[1:])])
        self.bottom_mlp = DenseArch()
        self.site_emb = BagEmbedding(TABLE_ROWS[0], DIM)
        self.app_emb = BagEmbedding(TABLE_ROWS[1], DIM)
        self.device_emb = BagEmbedding(TABLE_ROWS[2], DIM)
        self.interaction = DotInteraction(1 + len(TABLE_ROWS), dense_last)

    def forward(self, dense_x, sparse_ids):
        dense = self.bottom_mlp(dense_x)
        pooled = paddle.stack([self.site_emb(sparse_ids[:, 0]),
                               self.app_emb(sparse_ids[:, 1]),
                               self.device_emb(sparse_ids[:, 2])], axis=1)
        z = self.interaction(dense, pooled)
        for i, fc in enumerate(self.top_mlp):
            z = fc(z)
            if i < len(self.top_mlp) - 1:
                z = F.relu(z)
        return F.sigmoid(z)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_dlrm paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = DLRM(dense_last=bug == "paddle_interaction_dense_last")
    m.eval()
    return m


def _arrays():
    rng = np.random.default_rng(17)
    dense = rng.exponential(1.0, (BATCH, DENSE)).astype("float32")
    lengths = ((3, 2, 0), (1, 4, 2))  # [sample][feature]
    ids = np.full((BATCH, len(TABLE_ROWS), BAG), -1, dtype="int64")
    for b in range(BATCH):
        for f, rows in enumerate(TABLE_ROWS):
            ids[b, f, :lengths[b][f]] = rng.choice(rows, lengths[b][f], replace=False)
    return dense, ids


def inputs():
    dense, ids = _arrays()
    return (paddle.to_tensor(dense), paddle.to_tensor(ids)), {}


def loss(output):
    # click probabilities [2, 1]
    return (output**2).mean()
