"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_ranknet_adadelta_train_paddle.py) the way PyTorch learning-to-rank code writes
RankNet: one Sequential scorer and an explicit list of preference pairs.

    RankNet(num_features, hidden=(32, 16), dropout=0.1, input_dropout=0.2): registers
        model = Sequential(Dropout(0.2), Linear 10 -> 32, ReLU, Dropout(0.1), Linear 32 -> 16,
        ReLU, Dropout(0.1), Linear 16 -> 1)  (.0 - .7)
    forward(x [N, 10]) -> scores [N] (model(x).squeeze(1))

Data: the same queries as the paddle side (default_rng(3300 + step), same recipe).
Loss: the preference pairs (i, j) with y_i > y_j (torch.nonzero on the label matrix);
softplus(-(s_i - s_j)) = -log sigmoid(s_i - s_j), averaged over the pairs (sigma 1).
Optimizer: torch.optim.Adadelta(lr 1.0, rho 0.95, eps 1e-6, weight_decay 1e-3) - rho passed
explicitly: torch's default is 0.9, paddle's 0.95.

PADIFF_BUG (this side only):
  torch_dropout_swapped -> the scorer is built positionally in the paddle constructor's order,
              RankNet(10, (32, 16), 0.2, 0.1), but this constructor's order is (dropout,
              input_dropout): input dropout 0.1 and hidden dropout 0.2 (the rates swapped)
  torch_rho_default     -> Adadelta(..., lr=1.0, eps=1e-6, weight_decay=1e-3) without rho: torch's
              default rho 0.9 instead of paddle's 0.95
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_dropout_swapped", "torch_rho_default"} | {"paddle_ties_included"}  # the paddle side's, ignored here
N_DOCS, N_FEAT = 12, 10
INPUT_DROPOUT, DROPOUT = 0.2, 0.1

_Q = {}


def make_query(step):
    rng = np.random.default_rng(3300 + step)
    rel = rng.integers(0, 4, N_DOCS)
    x = rng.standard_normal((N_DOCS, N_FEAT))
    x[:, :3] += 0.5 * rel[:, None]
    return torch.tensor(x, dtype=torch.float32), torch.tensor(rel, dtype=torch.int64)


class RankNet(nn.Module):
    def __init__(self, num_features, hidden=(32, 16), dropout=0.1, input_dropout=0.2):
        super().__init__()
        layers = [nn.Dropout(input_dropout)]
        d = num_features
        for h in hidden:
            layers += [nn.Linear(d, h), nn.ReLU(), nn.Dropout(dropout)]
            d = h
        layers.append(nn.Linear(d, 1))
        self.model = nn.Sequential(*layers)

    def forward(self, x):
        return self.model(x).squeeze(1)


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    if b == "torch_dropout_swapped":
        m = RankNet(N_FEAT, (32, 16), INPUT_DROPOUT, DROPOUT)
    else:
        m = RankNet(N_FEAT, hidden=(32, 16), dropout=DROPOUT, input_dropout=INPUT_DROPOUT)
    m.train()
    return m


def inputs(step=0):
    x, rel = make_query(step)
    _Q["rel"] = rel
    return (x,), {}


def loss(scores):
    rel = _Q["rel"]
    i, j = torch.nonzero(rel[:, None] > rel[None, :], as_tuple=True)
    return F.softplus(-(scores[i] - scores[j])).mean()


def optimizer(model):
    if bug(BUGS) == "torch_rho_default":
        return torch.optim.Adadelta(model.parameters(), lr=1.0, eps=1e-6, weight_decay=1e-3)
    return torch.optim.Adadelta(model.parameters(), lr=1.0, rho=0.95, eps=1e-6, weight_decay=1e-3)
