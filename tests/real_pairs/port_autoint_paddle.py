"""Hand-written port, paddle side: an AutoInt CTR model (written by "person A", pytorch-fm style).

Inputs (positional): `sparse_ids` int64 [8, 3], one id per categorical field (site_id < 7,
app_id < 5, device_model < 9), and `dense_values` float32 [8, 2], the numeric fields
(hour_frac in [0, 1), price_log ~ N(2, 0.8)); numpy rng seed 11. Output: click probability
[8, 1].

Model:
- every field becomes an 8-d embedding; the field order on this side is
  [site_id, app_id, device_model, hour_frac, price_log];
  - categorical: ONE shared table `cat_embedding.embedding` [7 + 5 + 9 = 21, 8]; the layer adds
    the per-field offsets (0, 7, 12), a buffer, to the ids before the lookup (pytorch-fm
    FeaturesEmbedding);
  - numeric: `dense_embedding.weight` [2, 8] (create_parameter), value * row (a scaled
    embedding);
- three interacting layers (8 -> 16 -> 16 -> 16): multi-head self-attention over the 5 fields,
  2 heads of 8, scores q.k / sqrt(8), softmax over the key fields, heads concatenated, then
  relu(attention + x @ W_Res) (residual projection);
- `fc_out` Linear(5 * 16, 1) over the flattened fields, then sigmoid (inline F.sigmoid).

Paddle idioms on this side:
- root `AutoIntNet` registers `cat_embedding` (FeaturesEmbedding), `dense_embedding`
  (DenseEmbedding), `interacting` (LayerList of InteractingLayer, iterated) and `fc_out`.
- `InteractingLayer` holds four raw matrices (create_parameter, [in, out]) `W_Query`, `W_Key`,
  `W_Value`, `W_Res` and does everything with paddle.matmul inline: it has no sublayer.
- model() gives the tables, the dense rows and the output bias trained-looking values (numpy rng
  seed 23), so that nothing is an identity.

The torch side (port_autoint_torch.py) was written independently, DeepCTR-Torch style: one
nn.Embedding per field in a ModuleDict, one bias-free nn.Linear(1, 8) per numeric field, the
NUMERIC fields first, a fused qkv Linear with scaled_dot_product_attention, and an nn.Sequential
head (Flatten, Linear, Sigmoid).

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_no_field_offsets -> FeaturesEmbedding looks the raw per-field ids up in the shared
                             table without adding the field offsets (app_id and device_model
                             read rows 0..4 / 0..8, mostly site_id rows, instead of their own)
  paddle_attn_probs_bf16  -> InteractingLayer rounds the softmax probabilities to bfloat16
                             before the value matmul (a cast left over from a CPU bf16 AMP run),
                             in every layer; precision-level
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

FIELD_DIMS = [7, 5, 9]  # site_id, app_id, device_model
NUM_DENSE = 2  # hour_frac, price_log
EMBED_DIM, ATT_DIM, HEADS, N_LAYERS = 8, 8, 2, 3
BATCH = 8
OWN_BUGS = {"paddle_no_field_offsets", "paddle_attn_probs_bf16"}
OTHER_BUGS = {"torch_relu_before_residual", "torch_dense_cols_swapped"}


class FeaturesEmbedding(nn.Layer):
    def __init__(self, field_dims, embed_dim, use_offsets=True):
        super().__init__()
        self.use_offsets = use_offsets
        self.embedding = nn.Embedding(sum(field_dims), embed_dim)
        offsets = np.array((0, *np.cumsum(field_dims)[:-1]), dtype="int64")
        self.register_buffer("offsets", paddle.to_tensor(offsets))

    def forward(self, x):
        # x: [B, num_fields] int64
        if self.use_offsets:
            x = x + self.offsets.unsqueeze(0)
        return self.embedding(x)


class DenseEmbedding(nn.Layer):
    def __init__(self, num_fields, embed_dim):
        super().__init__()
        self.weight = self.create_parameter([num_fields, embed_dim],
                                            default_initializer=nn.initializer.Normal(0.0, 1.0))

    def forward(self, x):
        # x: [B, num_fields] float -> [B, num_fields, D]
        return x.unsqueeze(-1) * self.weight.unsqueeze(0)


class InteractingLayer(nn.Layer):
    def __init__(self, in_dim, att_dim=ATT_DIM, heads=HEADS, probs_bf16=False):
        super().__init__()
        self.att_dim, self.heads, self.probs_bf16 = att_dim, heads, probs_bf16
        init = nn.initializer.XavierUniform()
        out = att_dim * heads
        self.W_Query = self.create_parameter([in_dim, out], default_initializer=init)
        self.W_Key = self.create_parameter([in_dim, out], default_initializer=init)
        self.W_Value = self.create_parameter([in_dim, out], default_initializer=init)
        self.W_Res = self.create_parameter([in_dim, out], default_initializer=init)

    def _split(self, x):
        b, f, _ = x.shape
        return x.reshape([b, f, self.heads, self.att_dim]).transpose([0, 2, 1, 3])  # [B, H, F, d]

    def forward(self, x):
        q = self._split(paddle.matmul(x, self.W_Query))
        k = self._split(paddle.matmul(x, self.W_Key))
        v = self._split(paddle.matmul(x, self.W_Value))
        scores = paddle.matmul(q, k, transpose_y=True) / math.sqrt(self.att_dim)
        attn = F.softmax(scores, axis=-1)
        if self.probs_bf16:
            attn = attn.astype("bfloat16").astype("float32")
        out = paddle.matmul(attn, v).transpose([0, 2, 1, 3])  # [B, F, H, d]
        b, f = out.shape[0], out.shape[1]
        out = out.reshape([b, f, self.heads * self.att_dim])
        return F.relu(out + paddle.matmul(x, self.W_Res))


class AutoIntNet(nn.Layer):
    def __init__(self, use_offsets=True, probs_bf16=False):
        super().__init__()
        self.cat_embedding = FeaturesEmbedding(FIELD_DIMS, EMBED_DIM, use_offsets)
        self.dense_embedding = DenseEmbedding(NUM_DENSE, EMBED_DIM)
        dims = [EMBED_DIM] + [ATT_DIM * HEADS] * N_LAYERS
        self.interacting = nn.LayerList(
            [InteractingLayer(dims[i], probs_bf16=probs_bf16) for i in range(N_LAYERS)])
        self.num_fields = len(FIELD_DIMS) + NUM_DENSE
        self.fc_out = nn.Linear(self.num_fields * dims[-1], 1)

    def forward(self, sparse_ids, dense_values):
        x = paddle.concat([self.cat_embedding(sparse_ids), self.dense_embedding(dense_values)], axis=1)
        for layer in self.interacting:
            x = layer(x)
        logit = self.fc_out(x.flatten(start_axis=1))
        return F.sigmoid(logit)


def _trained_look(m):
    rng = np.random.default_rng(23)
    emb = m.cat_embedding.embedding.weight
    emb.set_value(rng.normal(0.0, 0.7, emb.shape).astype("float32"))
    dense = m.dense_embedding.weight
    dense.set_value(rng.normal(0.0, 0.6, dense.shape).astype("float32"))
    m.fc_out.bias.set_value(np.array([-0.35], dtype="float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_autoint paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = AutoIntNet(use_offsets=bug != "paddle_no_field_offsets", probs_bf16=bug == "paddle_attn_probs_bf16")
    _trained_look(m)
    m.eval()
    return m


def _batch():
    rng = np.random.default_rng(11)
    ids = np.stack([rng.integers(0, d, BATCH) for d in FIELD_DIMS], axis=1).astype("int64")
    dense = np.stack([rng.uniform(0.0, 1.0, BATCH), rng.normal(2.0, 0.8, BATCH)], axis=1).astype("float32")
    return ids, dense


def inputs():
    ids, dense = _batch()
    return (paddle.to_tensor(ids), paddle.to_tensor(dense)), {}


def loss(output):
    # click probabilities [8, 1] against fixed labels: binary cross-entropy
    labels = paddle.to_tensor(np.array([[1], [0], [0], [1], [0], [1], [1], [0]], dtype="float32"))
    return F.binary_cross_entropy(output, labels)
