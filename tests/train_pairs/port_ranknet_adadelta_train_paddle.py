"""Hand-written port in TRAINING mode, paddle side (written by "person A"): RankNet (Burges et al.
2005), pairwise learning to rank with a small MLP scorer, 3 steps, one query (12 documents) per step.

    RankNet: registers score (Linear 16 -> 1) first, then input_dropout (nn.Dropout 0.2 on the
        raw features), blocks (LayerList of 2 FCBlock: fc Linear 10 -> 32 / 32 -> 16, relu and
        dropout p 0.1 inline: F.relu, F.dropout(p, training=self.training))
    forward(features [N, 10]) -> scores [N] (score(h).squeeze(-1))

Data: inputs(step): one query from default_rng(3300 + step): 12 documents, graded relevance labels
0..3 (kept by the spec for loss()), features N(0, 1) with the first 3 shifted by 0.5 x label.
Loss (RankNet, the paper's cost in matrix form): o_ij = s_i - s_j for every ordered pair,
S_ij = sign(y_i - y_j), target P_ij = (1 + S_ij) / 2, C_ij = BCE-with-logits(o_ij, P_ij);
loss = mean of C_ij over the ordered pairs with S_ij != 0 (ties excluded; each unordered pair
appears twice with the same cost, so this is the mean over the unordered pairs too); sigma 1.
Optimizer: paddle.optimizer.Adadelta(learning_rate 1.0, epsilon 1e-6, rho 0.95,
weight_decay 1e-3): coupled L2 on every parameter (a float weight_decay is L2Decay).
Init (person A): paddle.seed(33); Linear weights paddle's default (Xavier uniform), biases
N(0, 0.1).

PADIFF_BUG (this side only):
  paddle_ties_included -> the pair mask is "i != j" instead of "S_ij != 0": tied documents enter
              the cost with target 1/2 (the paper's P = 1/2 for ties, not used by the reference)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_ties_included"} | {"torch_dropout_swapped", "torch_rho_default"}  # the torch side's, ignored here
N_DOCS, N_FEAT, HIDDEN = 12, 10, (32, 16)
INPUT_DROPOUT, DROPOUT = 0.2, 0.1
LR, EPS, RHO, WEIGHT_DECAY = 1.0, 1e-6, 0.95, 1e-3

_QUERY = {}


def query(step):
    rng = np.random.default_rng(3300 + step)
    labels = rng.integers(0, 4, N_DOCS)
    feats = rng.standard_normal((N_DOCS, N_FEAT))
    feats[:, :3] += 0.5 * labels[:, None]
    return feats.astype("float32"), labels.astype("int64")


def _bias():
    return paddle.ParamAttr(initializer=nn.initializer.Normal(0.0, 0.1))


class FCBlock(nn.Layer):
    def __init__(self, d_in, d_out, dropout):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out, bias_attr=_bias())
        self.dropout = dropout

    def forward(self, x):
        return F.dropout(F.relu(self.fc(x)), p=self.dropout, training=self.training)


class RankNet(nn.Layer):
    def __init__(self, n_feat=N_FEAT, hidden=HIDDEN, input_dropout=INPUT_DROPOUT, dropout=DROPOUT):
        super().__init__()
        self.score = nn.Linear(hidden[-1], 1, bias_attr=_bias())
        self.input_dropout = nn.Dropout(input_dropout)
        dims = [n_feat] + list(hidden)
        self.blocks = nn.LayerList([FCBlock(a, b, dropout) for a, b in zip(dims[:-1], dims[1:])])

    def forward(self, x):
        h = self.input_dropout(x)
        for block in self.blocks:
            h = block(h)
        return self.score(h).squeeze(-1)


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(33)
    m = RankNet()
    m.train()
    return m


def inputs(step=0):
    feats, labels = query(step)
    _QUERY["labels"] = labels
    return (paddle.to_tensor(feats),), {}


def loss(scores):
    y = paddle.to_tensor(_QUERY["labels"]).astype(scores.dtype)
    o = scores.unsqueeze(1) - scores.unsqueeze(0)  # o_ij = s_i - s_j
    s_ij = paddle.sign(y.unsqueeze(1) - y.unsqueeze(0))
    target = 0.5 * (1.0 + s_ij)
    if bug(BUGS) == "paddle_ties_included":
        mask = 1.0 - paddle.eye(scores.shape[0], dtype=scores.dtype)
    else:
        mask = paddle.abs(s_ij)
    cost = F.binary_cross_entropy_with_logits(o, target, weight=mask, reduction="sum")
    return cost / mask.sum()


def optimizer(model):
    return paddle.optimizer.Adadelta(learning_rate=LR, epsilon=EPS, rho=RHO, weight_decay=WEIGHT_DECAY,
                                     parameters=model.parameters())
