"""Hand-written port, torch side: a tiny FT-Transformer-style model for tabular data (written by
"person B", rtdl style).

The same math as port_tabtransformer_paddle.py, re-implemented by hand. Sizes: 5 categorical
columns with cardinalities (3, 5, 4, 6, 2), 3 numerical columns, token width 32, 2 pre-LN blocks
(4 heads of 8, LayerNorm eps 1e-5), ReGLU feed-forward 32 -> 128 -> 64 -> 32, final LayerNorm on
the CLS token, MLP head 32 -> 64 -> ReLU -> 3. Token order [CLS, num0..num2, cat0..cat4].

Torch idioms on this side:
- root `FTTransformer`: `tokenizer` (`FeatureTokenizer`), `cls_token` (`CLSToken` module with a
  `weight` [32], prepends the token), `blocks` (ModuleList of `Block`), `head` = nn.Sequential(
  LayerNorm, Linear, ReLU, Linear), the CLS output taken inline.
- `FeatureTokenizer`: `num_tok` (`NumericalFeatureTokenizer`: `weight` [3, 32], `bias` [3, 32])
  and `cat_tok` (`CategoricalFeatureTokenizer`): ONE nn.Embedding `embeddings` (21, 32) shared
  by all columns, row 0 reserved for a missing / unseen value (never used by the inputs), and a
  persistent buffer `category_offsets` = 1 + exclusive cumsum of the cardinalities
  = [1, 4, 9, 13, 19], added to the ids before the single lookup.
- `Block` registers `ffn` and `ffn_normalization` BEFORE `attention_normalization` and
  `attention` (called in the opposite order).
- `MultiheadAttention` (`attention`): one packed `qkv` Linear(32, 96) (rows q | k | v) and `out`,
  F.scaled_dot_product_attention (its default scale 1 / sqrt(8)).
- `FFN` (`ffn`): `linear_first` Linear(32, 128), `activation` = `ReGLU` nn.Module (first half *
  relu(second half)), `linear_second` Linear(64, 32).

Planted bugs (PADIFF_BUG), see port_tabtransformer_truth.json; the paddle side's bug name is
accepted and ignored, any other name raises ValueError:
  torch_offset_off_by_one -> category_offsets built as the plain exclusive cumsum [0, 3, 8, 12, 18]:
                             the reserved row 0 is forgotten, so every categorical id is looked
                             up one row too early (column 0 reads the reserved row)
  torch_reglu_swapped     -> ReGLU returns relu(a) * b instead of a * relu(b) (the value and gate
                             halves of linear_first swapped)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

CARDS = (3, 5, 4, 6, 2)
N_NUM, D, HEADS, FFN_DIM, CLASSES, N_BLOCKS = 3, 32, 4, 64, 3, 2
EPS = 1e-5
BATCH = 4
OWN_BUGS = {"torch_offset_off_by_one", "torch_reglu_swapped"}
OTHER_BUGS = {"paddle_attn_scale_d_model"}


class NumericalFeatureTokenizer(nn.Module):
    def __init__(self, n_features, d_token):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_features, d_token).uniform_(-d_token ** -0.5, d_token ** -0.5))
        self.bias = nn.Parameter(torch.empty(n_features, d_token).uniform_(-d_token ** -0.5, d_token ** -0.5))

    def forward(self, x_num):
        return self.weight[None] * x_num[..., None] + self.bias[None]


class CategoricalFeatureTokenizer(nn.Module):
    def __init__(self, cardinalities, d_token, forget_reserved_row=False):
        super().__init__()
        offsets = torch.tensor([0] + list(cardinalities[:-1])).cumsum(0)
        if not forget_reserved_row:
            offsets = offsets + 1  # row 0 = missing / unseen category
        self.register_buffer("category_offsets", offsets)
        self.embeddings = nn.Embedding(sum(cardinalities) + 1, d_token)

    def forward(self, x_cat):
        return self.embeddings(x_cat + self.category_offsets[None])


class FeatureTokenizer(nn.Module):
    def __init__(self, forget_reserved_row=False):
        super().__init__()
        self.num_tok = NumericalFeatureTokenizer(N_NUM, D)
        self.cat_tok = CategoricalFeatureTokenizer(CARDS, D, forget_reserved_row)

    def forward(self, x_num, x_cat):
        return torch.cat([self.num_tok(x_num), self.cat_tok(x_cat)], dim=1)


class CLSToken(nn.Module):
    def __init__(self, d_token):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d_token) * 0.1)

    def forward(self, x):
        return torch.cat([self.weight.expand(x.shape[0], 1, -1), x], dim=1)


class MultiheadAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(D, 3 * D)
        self.out = nn.Linear(D, D)

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v)
        return self.out(y.transpose(1, 2).reshape(b, n, D))


class ReGLU(nn.Module):
    def __init__(self, swapped=False):
        super().__init__()
        self.swapped = swapped

    def forward(self, x):
        a, b = x.chunk(2, dim=-1)
        if self.swapped:
            return F.relu(a) * b
        return a * F.relu(b)


class FFN(nn.Module):
    def __init__(self, swapped=False):
        super().__init__()
        self.linear_first = nn.Linear(D, 2 * FFN_DIM)
        self.activation = ReGLU(swapped)
        self.linear_second = nn.Linear(FFN_DIM, D)

    def forward(self, x):
        return self.linear_second(self.activation(self.linear_first(x)))


class Block(nn.Module):
    def __init__(self, swapped=False):
        super().__init__()
        self.ffn = FFN(swapped)
        self.ffn_normalization = nn.LayerNorm(D, eps=EPS)
        self.attention_normalization = nn.LayerNorm(D, eps=EPS)
        self.attention = MultiheadAttention()

    def forward(self, x):
        x = x + self.attention(self.attention_normalization(x))
        return x + self.ffn(self.ffn_normalization(x))


class FTTransformer(nn.Module):
    def __init__(self, forget_reserved_row=False, swapped=False):
        super().__init__()
        self.tokenizer = FeatureTokenizer(forget_reserved_row)
        self.cls_token = CLSToken(D)
        self.blocks = nn.ModuleList([Block(swapped) for _ in range(N_BLOCKS)])
        self.head = nn.Sequential(nn.LayerNorm(D, eps=EPS), nn.Linear(D, FFN_DIM), nn.ReLU(),
                                  nn.Linear(FFN_DIM, CLASSES))

    def forward(self, x_cat, x_num):
        x = self.cls_token(self.tokenizer(x_num, x_cat))
        for block in self.blocks:
            x = block(x)
        return self.head(x[:, 0])


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_tabtransformer torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = FTTransformer(forget_reserved_row=bug == "torch_offset_off_by_one", swapped=bug == "torch_reglu_swapped")
    return m.eval()


def _data():
    rng = np.random.default_rng(21)
    x_cat = np.stack([rng.integers(0, c, BATCH) for c in CARDS], axis=1).astype("int64")
    x_num = rng.standard_normal((BATCH, N_NUM)).astype("float32")
    return x_cat, x_num


def inputs():
    x_cat, x_num = _data()
    return (torch.from_numpy(x_cat), torch.from_numpy(x_num)), {}


def loss(output):
    # logits [4, 3]
    return (output**2).mean()
