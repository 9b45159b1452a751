"""Hand-written port, paddle side: a tiny FT-Transformer-style model for tabular data (written by
"person A").

Sizes: 5 categorical columns with cardinalities (3, 5, 4, 6, 2), 3 numerical columns, token width
32, 2 pre-LN transformer blocks (4 heads of 8, LayerNorm eps 1e-5), a ReGLU feed-forward
(32 -> 128 -> split 64 | 64 -> 32), a final LayerNorm on the CLS token and an MLP head
32 -> 64 -> ReLU -> 3 classes. Batch 4. Token order on both sides: [CLS, num0..num2, cat0..cat4]
(9 tokens). There is no positional embedding.

Paddle idioms on this side:
- root `TabTransformer`: `num_embed` (registered FIRST, called second), `cat_embed`, the
  `cls_token` raw parameter [1, 1, 32] (create_parameter) prepended inline, `layers` (LayerList of
  `TransformerLayer`), `final_norm`, `head_fc1`, `head_fc2` (F.relu inline between them).
- `CategoricalEmbeddings` (`cat_embed`): one nn.Embedding(card, 32) PER COLUMN in a LayerList
  `tables`; the column's ids are looked up in its own table and the results are stacked.
- `NumericalEmbedding` (`num_embed`): per-feature `weight` and `bias`, both [1, 3, 32]
  (create_parameter), token_j = x_j * weight_j + bias_j.
- `TransformerLayer`: `norm1`, `attn`, `norm2`, `ffn`; x + attn(norm1(x)), x + ffn(norm2(x)).
- `SelfAttention`: four Linears `q_proj`, `k_proj`, `v_proj`, `out_proj` ([in, out] weights),
  explicit matmul + F.softmax, scale d_head ** -0.5.
- `ReGLUFeedForward`: `fc_in` Linear(32, 128), split into value | gate, value * relu(gate) inline
  (no activation module), `fc_out` Linear(64, 32).

The torch side (port_tabtransformer_torch.py) was written independently in the rtdl style: one big
nn.Embedding for all categorical columns with an offsets buffer, a packed qkv projection and
F.scaled_dot_product_attention, an nn.Module ReGLU and an nn.Sequential head.

PADIFF_BUG=paddle_attn_scale_d_model plants this side's bug: the attention logits are scaled by
d_model ** -0.5 (32) instead of d_head ** -0.5 (8), in both blocks. The torch side's bug names are
accepted and ignored; any other name raises ValueError.
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

CARDS = (3, 5, 4, 6, 2)
N_NUM, D, HEADS, FFN, CLASSES, LAYERS = 3, 32, 4, 64, 3, 2
D_HEAD = D // HEADS
EPS = 1e-5
BATCH = 4
OWN_BUGS = {"paddle_attn_scale_d_model"}
OTHER_BUGS = {"torch_offset_off_by_one", "torch_reglu_swapped"}


class CategoricalEmbeddings(nn.Layer):
    def __init__(self, cards, dim):
        super().__init__()
        self.tables = nn.LayerList(
            [nn.Embedding(c, dim, weight_attr=nn.initializer.Normal(0.0, 0.5)) for c in cards])

    def forward(self, x_cat):
        # x_cat [B, n_cat] int64 -> [B, n_cat, dim]
        return paddle.stack([tab(x_cat[:, k]) for k, tab in enumerate(self.tables)], axis=1)


class NumericalEmbedding(nn.Layer):
    def __init__(self, n_features, dim):
        super().__init__()
        self.weight = self.create_parameter([1, n_features, dim], default_initializer=nn.initializer.Normal(0.0, 0.5))
        self.bias = self.create_parameter([1, n_features, dim], default_initializer=nn.initializer.Normal(0.0, 0.5))

    def forward(self, x_num):
        # x_num [B, n_num] -> [B, n_num, dim]
        return x_num.unsqueeze(-1) * self.weight + self.bias


class SelfAttention(nn.Layer):
    def __init__(self, scale_by_d_model=False):
        super().__init__()
        self.q_proj = nn.Linear(D, D)
        self.k_proj = nn.Linear(D, D)
        self.v_proj = nn.Linear(D, D)
        self.out_proj = nn.Linear(D, D)
        self.scale = D ** -0.5 if scale_by_d_model else D_HEAD ** -0.5

    def _heads(self, t):
        b, n, _ = t.shape
        return t.reshape([b, n, HEADS, D_HEAD]).transpose([0, 2, 1, 3])

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = self._heads(self.q_proj(x)), self._heads(self.k_proj(x)), self._heads(self.v_proj(x))
        att = F.softmax(paddle.matmul(q, k, transpose_y=True) * self.scale, axis=-1)
        out = paddle.matmul(att, v).transpose([0, 2, 1, 3]).reshape([b, n, D])
        return self.out_proj(out)


class ReGLUFeedForward(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc_in = nn.Linear(D, 2 * FFN)
        self.fc_out = nn.Linear(FFN, D)

    def forward(self, x):
        value, gate = paddle.chunk(self.fc_in(x), 2, axis=-1)
        return self.fc_out(value * F.relu(gate))


class TransformerLayer(nn.Layer):
    def __init__(self, scale_by_d_model=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(D, epsilon=EPS)
        self.attn = SelfAttention(scale_by_d_model)
        self.norm2 = nn.LayerNorm(D, epsilon=EPS)
        self.ffn = ReGLUFeedForward()

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.ffn(self.norm2(x))


class TabTransformer(nn.Layer):
    def __init__(self, scale_by_d_model=False):
        super().__init__()
        self.num_embed = NumericalEmbedding(N_NUM, D)
        self.cat_embed = CategoricalEmbeddings(CARDS, D)
        self.cls_token = self.create_parameter([1, 1, D], default_initializer=nn.initializer.Normal(0.0, 0.5))
        self.layers = nn.LayerList([TransformerLayer(scale_by_d_model) for _ in range(LAYERS)])
        self.final_norm = nn.LayerNorm(D, epsilon=EPS)
        self.head_fc1 = nn.Linear(D, FFN)
        self.head_fc2 = nn.Linear(FFN, CLASSES)

    def forward(self, x_cat, x_num):
        cat_tokens = self.cat_embed(x_cat)
        num_tokens = self.num_embed(x_num)
        cls = self.cls_token.expand([x_cat.shape[0], 1, D])
        x = paddle.concat([cls, num_tokens, cat_tokens], axis=1)  # [B, 1 + 3 + 5, D]
        for layer in self.layers:
            x = layer(x)
        h = self.final_norm(x[:, 0])
        return self.head_fc2(F.relu(self.head_fc1(h)))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_tabtransformer paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = TabTransformer(scale_by_d_model=bug == "paddle_attn_scale_d_model")
    m.eval()
    return m


def _data():
    rng = np.random.default_rng(21)
    x_cat = np.stack([rng.integers(0, c, BATCH) for c in CARDS], axis=1).astype("int64")
    x_num = rng.standard_normal((BATCH, N_NUM)).astype("float32")
    return x_cat, x_num


def inputs():
    x_cat, x_num = _data()
    return (paddle.to_tensor(x_cat), paddle.to_tensor(x_num)), {}


def loss(output):
    # logits [4, 3]
    return (output**2).mean()
