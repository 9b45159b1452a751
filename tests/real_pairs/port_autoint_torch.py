"""Hand-written port, torch side: an AutoInt CTR model (written by "person B", DeepCTR-Torch style).

The same math as port_autoint_paddle.py, re-implemented by hand: positional inputs `sparse_ids`
int64 [8, 3] (site_id, app_id, device_model) and `dense_values` float32 [8, 2] (hour_frac,
price_log); output the click probability [8, 1].

Torch idioms on this side:
- root `AutoInt` registers `embedder` (FieldEmbedder), `blocks` (nn.Sequential of three
  InteractingBlock, called once) and `head` = nn.Sequential(nn.Flatten(), nn.Linear(80, 1),
  nn.Sigmoid()).
- `FieldEmbedder` registers `dense_proj` FIRST: a ModuleList of bias-free nn.Linear(1, 8), one
  per numeric field (value * column: a scaled embedding), then `embedding_dict`, an
  nn.ModuleDict of one nn.Embedding per categorical field (7, 5 and 9 rows, no shared table, no
  offsets). Columns are found through a DeepCTR-like feature index. The fields are stacked
  NUMERIC FIRST: [hour_frac, price_log, site_id, app_id, device_model], so the head's Linear sees
  the flattened fields in that order.
- `InteractingBlock`: `attn` (FieldSelfAttention: ONE fused `qkv` nn.Linear(in, 48, bias=False),
  chunked q | k | v, heads split head-major, F.scaled_dot_product_attention, whose default scale
  is 1 / sqrt(8)), `res_proj` nn.Linear(in, 16, bias=False) and `act` nn.ReLU:
  act(attn(x) + res_proj(x)).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_relu_before_residual -> InteractingBlock applies the ReLU to the attention output and
                                adds the residual projection after it: act(attn(x)) + res(x)
  torch_dense_cols_swapped   -> the feature index of the numeric columns is miscounted, so
                                hour_frac's embedding column scales price_log's value and
                                vice versa
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

SPARSE_FEATURES = [("site_id", 7), ("app_id", 5), ("device_model", 9)]
DENSE_FEATURES = ["hour_frac", "price_log"]
EMBEDDING_SIZE, ATT_EMBEDDING_SIZE, HEAD_NUM, LAYER_NUM = 8, 8, 2, 3
BATCH = 8
OWN_BUGS = {"torch_relu_before_residual", "torch_dense_cols_swapped"}
OTHER_BUGS = {"paddle_no_field_offsets", "paddle_attn_probs_bf16"}


class FieldEmbedder(nn.Module):
    def __init__(self, embedding_size, cols_swapped=False):
        super().__init__()
        self.dense_proj = nn.ModuleList([nn.Linear(1, embedding_size, bias=False) for _ in DENSE_FEATURES])
        self.embedding_dict = nn.ModuleDict({name: nn.Embedding(vocab, embedding_size)
                                             for name, vocab in SPARSE_FEATURES})
        self.sparse_index = {name: i for i, (name, _) in enumerate(SPARSE_FEATURES)}
        if cols_swapped:
            self.dense_index = {name: len(DENSE_FEATURES) - 1 - i for i, name in enumerate(DENSE_FEATURES)}
        else:
            self.dense_index = {name: i for i, name in enumerate(DENSE_FEATURES)}

    def forward(self, sparse_ids, dense_values):
        fields = []
        for name, proj in zip(DENSE_FEATURES, self.dense_proj):
            col = self.dense_index[name]
            fields.append(proj(dense_values[:, col:col + 1]))
        for name, _ in SPARSE_FEATURES:
            fields.append(self.embedding_dict[name](sparse_ids[:, self.sparse_index[name]]))
        return torch.stack(fields, dim=1)  # [B, 5, E], numeric fields first


class FieldSelfAttention(nn.Module):
    def __init__(self, in_features, head_num=HEAD_NUM, att_size=ATT_EMBEDDING_SIZE):
        super().__init__()
        self.head_num, self.att_size = head_num, att_size
        self.qkv = nn.Linear(in_features, 3 * head_num * att_size, bias=False)

    def forward(self, x):
        b, f, _ = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (t.view(b, f, self.head_num, self.att_size).transpose(1, 2) for t in (q, k, v))
        out = F.scaled_dot_product_attention(q, k, v)  # [B, H, F, d], scale 1 / sqrt(d)
        return out.transpose(1, 2).reshape(b, f, self.head_num * self.att_size)


class InteractingBlock(nn.Module):
    def __init__(self, in_features, relu_first=False):
        super().__init__()
        self.relu_first = relu_first
        self.attn = FieldSelfAttention(in_features)
        self.res_proj = nn.Linear(in_features, HEAD_NUM * ATT_EMBEDDING_SIZE, bias=False)
        self.act = nn.ReLU()

    def forward(self, x):
        if self.relu_first:
            return self.act(self.attn(x)) + self.res_proj(x)
        return self.act(self.attn(x) + self.res_proj(x))


class AutoInt(nn.Module):
    def __init__(self, relu_first=False, cols_swapped=False):
        super().__init__()
        self.embedder = FieldEmbedder(EMBEDDING_SIZE, cols_swapped)
        width = HEAD_NUM * ATT_EMBEDDING_SIZE
        self.blocks = nn.Sequential(*[InteractingBlock(EMBEDDING_SIZE if i == 0 else width, relu_first)
                                      for i in range(LAYER_NUM)])
        num_fields = len(SPARSE_FEATURES) + len(DENSE_FEATURES)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(num_fields * width, 1), nn.Sigmoid())

    def forward(self, sparse_ids, dense_values):
        return self.head(self.blocks(self.embedder(sparse_ids, dense_values)))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_autoint torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = AutoInt(relu_first=bug == "torch_relu_before_residual", cols_swapped=bug == "torch_dense_cols_swapped")
    return m.eval()


def _batch():
    rng = np.random.default_rng(11)
    ids = np.stack([rng.integers(0, vocab, BATCH) for _, vocab in SPARSE_FEATURES], axis=1).astype("int64")
    dense = np.stack([rng.uniform(0.0, 1.0, BATCH), rng.normal(2.0, 0.8, BATCH)], axis=1).astype("float32")
    return ids, dense


def inputs():
    ids, dense = _batch()
    return (torch.from_numpy(ids), torch.from_numpy(dense)), {}


def loss(output):
    # click probabilities [8, 1] against fixed labels: binary cross-entropy
    labels = torch.tensor([[1], [0], [0], [1], [0], [1], [1], [0]], dtype=torch.float32)
    return F.binary_cross_entropy(output, labels)
