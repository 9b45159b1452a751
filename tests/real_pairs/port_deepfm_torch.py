"""Hand-written port, torch side: a tiny DeepFM click-through-rate model (written by "person B").

The same model as port_deepfm_paddle.py, written in the pytorch-fm style. 6 sparse fields,
vocab sizes [7, 11, 20, 9, 15, 13] (75 rows in all), embedding dim 8, batch 4; input `x`
[4, 6] int64 of per-field LOCAL ids; output the click probability [4].

Torch idioms on this side (ONE PACKED table, per-field offsets):
- `FeaturesEmbedding`: one nn.Embedding(75, 8) `embedding`; a non-persistent int64 buffer
  `offsets` = (0, 7, 18, 38, 47, 62), the first row of each field in the packed table, is added
  to the local ids before the lookup -> [B, 6, 8];
- `FeaturesLinear` (the first-order term): one packed nn.Embedding(75, 1) `fc`, its own
  `offsets` buffer, a `bias` nn.Parameter [1]; sum over the fields -> [B, 1];
- `FactorizationMachine(reduce_sum=True)` (no parameters):
  0.5 * sum_k((sum_f e)^2 - sum_f e^2) -> [B, 1];
- `MultiLayerPerceptron`: `mlp` = nn.Sequential(Linear(48, 32), BatchNorm1d, ReLU, Dropout(0.2),
  Linear(32, 32), BatchNorm1d, ReLU, Dropout(0.2), Linear(32, 1)) (indices 0 .. 8; dropout is a
  no-op in eval);
- root `DeepFMModel` registers linear, fm, embedding, mlp (embedding is called FIRST);
  forward: embed_x = embedding(x); linear(x) + fm(embed_x) + mlp(embed_x.view(-1, 48)),
  torch.sigmoid(x.squeeze(1)).

Planted bug (PADIFF_BUG), see port_deepfm_truth.json; the paddle side's bug names are accepted
and ignored, any other name raises ValueError:
  torch_offsets_off_by_one -> FeaturesEmbedding's offsets are built as the LAST row of the
                              previous field, (0, *(cumsum(field_dims)[:-1] - 1)) = (0, 6, 17,
                              37, 46, 61), instead of its end (0, 7, 18, 38, 47, 62): every
                              field but the first looks up the row one below its own (its
                              id 0 reads the previous field's last row). FeaturesLinear keeps
                              the right offsets.
"""
import os

import numpy as np
import torch
from torch import nn

FIELD_DIMS = [7, 11, 20, 9, 15, 13]
EMBED_DIM = 8
MLP_DIMS = (32, 32)
DROPOUT = 0.2
BATCH = 4
OWN_BUGS = {"torch_offsets_off_by_one"}
OTHER_BUGS = {"paddle_fm_no_half", "paddle_dnn_last_no_relu"}


def _offsets(field_dims, off_by_one=False):
    ends = np.cumsum(field_dims)[:-1]
    if off_by_one:
        ends = ends - 1
    return torch.tensor(np.array((0, *ends)), dtype=torch.long)


class FeaturesLinear(nn.Module):
    def __init__(self, field_dims, output_dim=1):
        super().__init__()
        self.fc = nn.Embedding(sum(field_dims), output_dim)
        self.bias = nn.Parameter(torch.zeros((output_dim,)))
        self.register_buffer("offsets", _offsets(field_dims), persistent=False)

    def forward(self, x):
        x = x + self.offsets.unsqueeze(0)
        return torch.sum(self.fc(x), dim=1) + self.bias


class FeaturesEmbedding(nn.Module):
    def __init__(self, field_dims, embed_dim, off_by_one=False):
        super().__init__()
        self.embedding = nn.Embedding(sum(field_dims), embed_dim)
        self.register_buffer("offsets", _offsets(field_dims, off_by_one), persistent=False)
        nn.init.xavier_uniform_(self.embedding.weight.data)

    def forward(self, x):
        x = x + self.offsets.unsqueeze(0)
        return self.embedding(x)


class FactorizationMachine(nn.Module):
    def __init__(self, reduce_sum=True):
        super().__init__()
        self.reduce_sum = reduce_sum

    def forward(self, x):
        square_of_sum = torch.sum(x, dim=1) ** 2
        sum_of_square = torch.sum(x**2, dim=1)
        ix = square_of_sum - sum_of_square
        if self.reduce_sum:
            ix = torch.sum(ix, dim=1, keepdim=True)
        return 0.5 * ix


class MultiLayerPerceptron(nn.Module):
    def __init__(self, input_dim, embed_dims, dropout, output_layer=True):
        super().__init__()
        layers = []
        for embed_dim in embed_dims:
            layers.append(nn.Linear(input_dim, embed_dim))
            layers.append(nn.BatchNorm1d(embed_dim))
            layers.append(nn.ReLU())
            layers.append(nn.Dropout(p=dropout))
            input_dim = embed_dim
        if output_layer:
            layers.append(nn.Linear(input_dim, 1))
        self.mlp = nn.Sequential(*layers)

    def forward(self, x):
        return self.mlp(x)


class DeepFMModel(nn.Module):
    def __init__(self, field_dims, embed_dim, mlp_dims, dropout, offsets_off_by_one=False):
        super().__init__()
        self.linear = FeaturesLinear(field_dims)
        self.fm = FactorizationMachine(reduce_sum=True)
        self.embedding = FeaturesEmbedding(field_dims, embed_dim, offsets_off_by_one)
        self.embed_output_dim = len(field_dims) * embed_dim
        self.mlp = MultiLayerPerceptron(self.embed_output_dim, mlp_dims, dropout)

    def forward(self, x):
        embed_x = self.embedding(x)
        x = self.linear(x) + self.fm(embed_x) + self.mlp(embed_x.view(-1, self.embed_output_dim))
        return torch.sigmoid(x.squeeze(1))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_deepfm torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = DeepFMModel(FIELD_DIMS, EMBED_DIM, MLP_DIMS, DROPOUT, offsets_off_by_one=bug == "torch_offsets_off_by_one")
    return m.eval()


def _ids():
    rng = np.random.default_rng(9)
    return np.stack([rng.integers(0, v, BATCH) for v in FIELD_DIMS], axis=1).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # click probabilities [4]
    return (output**2).mean()
