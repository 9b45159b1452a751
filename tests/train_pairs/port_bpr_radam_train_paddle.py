"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a two-tower BPR
recommender (Bayesian Personalised Ranking, Rendle et al. 2009), 3 steps, one batch of
(user, positive item, negative item) triples per step.

    TwoTowerBPR: registers user_emb (Embedding 40 x 16), item_emb (Embedding 60 x 16),
        user_tower, item_tower (Tower: fc1 Linear 16 -> 32, relu, inline F.dropout p 0.1,
        fc2 Linear 32 -> 16)
    forward(users, pos, neg) -> (pos_score [B], neg_score [B], (e_u, e_pos, e_neg))
        the items are gathered as one batch concat([pos, neg]) [2B] and go through the item tower
        in one call; score = (u * i).sum(-1) (elementwise product, summed)

Data: inputs(step): 16 triples from default_rng(3100 + step): users in 0..39, positive items in
0..59, negative items different from the positive one ((pos + 1 + k) % 60, k in 0..58).
Loss (BPR): -log_sigmoid(pos_score - neg_score).mean()
    + REG * 0.5 * (||E_u||^2 + ||E_pos||^2 + ||E_neg||^2) / B   (squared Frobenius norms of the
    gathered raw embeddings, LightGCN's reg_loss).
Optimizer: RAdam(learning_rate 0.05, beta1 0.9, beta2 0.999, epsilon 1e-8) over all parameters;
weight decay (coupled L2, 1e-2) on the towers only, set per parameter with
ParamAttr(regularizer=L2Decay(1e-2)) on the towers' weights and biases (the tables are
regularised by the loss's L2 on the gathered rows instead).
Init (person A): numpy default_rng(31): tables N(0, 0.3), tower matrices N(0, 1/sqrt(fan_in)),
biases N(0, 0.1).

PADIFF_BUG (this side only):
  paddle_keep_prob -> the item tower is built with dropout 0.9: the reference config's keep
              probability (0.9, NGCF-style mess_dropout) passed as paddle's drop probability p
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_keep_prob"} | {"l2_unsquared", "decay_tables"}  # the torch side's, ignored here
N_USERS, N_ITEMS, DIM, HIDDEN, BATCH = 40, 60, 16, 32, 16
DROPOUT, KEEP_PROB = 0.1, 0.9
LR, BETA1, BETA2, EPS = 0.05, 0.9, 0.999, 1e-8
TOWER_DECAY, REG = 1e-2, 1e-3

_BATCH = {}


def triples(step):
    rng = np.random.default_rng(3100 + step)
    users = rng.integers(0, N_USERS, BATCH).astype("int64")
    pos = rng.integers(0, N_ITEMS, BATCH).astype("int64")
    neg = ((pos + 1 + rng.integers(0, N_ITEMS - 1, BATCH)) % N_ITEMS).astype("int64")
    return users, pos, neg


def _decayed():
    return paddle.ParamAttr(regularizer=paddle.regularizer.L2Decay(TOWER_DECAY))


class Tower(nn.Layer):
    def __init__(self, dim, hidden, dropout):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden, weight_attr=_decayed(), bias_attr=_decayed())
        self.fc2 = nn.Linear(hidden, dim, weight_attr=_decayed(), bias_attr=_decayed())
        self.p = dropout

    def forward(self, x):
        h = F.relu(self.fc1(x))
        h = F.dropout(h, p=self.p, training=self.training)
        return self.fc2(h)


class TwoTowerBPR(nn.Layer):
    def __init__(self, item_dropout=DROPOUT):
        super().__init__()
        self.user_emb = nn.Embedding(N_USERS, DIM)
        self.item_emb = nn.Embedding(N_ITEMS, DIM)
        self.user_tower = Tower(DIM, HIDDEN, DROPOUT)
        self.item_tower = Tower(DIM, HIDDEN, item_dropout)

    def forward(self, users, pos, neg):
        e_u = self.user_emb(users)
        e_items = self.item_emb(paddle.concat([pos, neg]))
        u = self.user_tower(e_u)
        items = self.item_tower(e_items)
        i_pos, i_neg = paddle.split(items, 2, axis=0)
        e_pos, e_neg = paddle.split(e_items, 2, axis=0)
        return (u * i_pos).sum(-1), (u * i_neg).sum(-1), (e_u, e_pos, e_neg)


def _init(m):
    rng = np.random.default_rng(31)
    for name, p in m.named_parameters():
        if name.endswith("emb.weight"):
            v = rng.normal(0.0, 0.3, p.shape)
        elif p.ndim == 2:  # paddle Linear weight [in, out]
            v = rng.normal(0.0, 1.0 / np.sqrt(p.shape[0]), p.shape)
        else:
            v = rng.normal(0.0, 0.1, p.shape)
        p.set_value(v.astype("float32"))


def model():
    b = bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = TwoTowerBPR(item_dropout=KEEP_PROB if b == "paddle_keep_prob" else DROPOUT)
    _init(m)
    m.train()
    return m


def inputs(step=0):
    users, pos, neg = triples(step)
    return (paddle.to_tensor(users), paddle.to_tensor(pos), paddle.to_tensor(neg)), {}


def loss(output):
    pos_score, neg_score, (e_u, e_pos, e_neg) = output
    bpr = -F.log_sigmoid(pos_score - neg_score).mean()
    sq = (e_u ** 2).sum() + (e_pos ** 2).sum() + (e_neg ** 2).sum()
    return bpr + REG * 0.5 * sq / pos_score.shape[0]


def optimizer(model):
    return paddle.optimizer.RAdam(learning_rate=LR, beta1=BETA1, beta2=BETA2, epsilon=EPS,
                                  parameters=model.parameters())
