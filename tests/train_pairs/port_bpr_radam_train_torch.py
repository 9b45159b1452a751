"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_bpr_radam_train_paddle.py), LightGCN/recbole style.

    BPRRecommender: registers item_mlp, user_mlp (Sequential(Linear 16 -> 32, ReLU, Dropout(0.1),
        Linear 32 -> 16): .0 .1 .2 .3), embedding (ONE Embedding(40 + 60, 16) table: users in
        rows 0..39, items at offset 40)
    forward(users, pos, neg) -> (pos_score [B], neg_score [B], (u_ego, pos_ego, neg_ego))
        items looked up as one batch (cat([pos, neg]) + 40), one item_mlp call; score = a batched
        dot product bmm(u[:, None, :], i[:, :, None])

Loss: softplus(neg_score - pos_score).mean() (= -log sigmoid(pos - neg))
    + REG * (u_ego.norm(2).pow(2) + pos_ego.norm(2).pow(2) + neg_ego.norm(2).pow(2)) / 2 / B
Optimizer: torch.optim.RAdam(lr 0.05, betas (0.9, 0.999), eps 1e-8), two parameter groups:
[towers, weight_decay 1e-2], [embedding table, weight_decay 0] (coupled L2, torch's default).
Data: the same triples as the paddle side (default_rng(3100 + step), same recipe).

PADIFF_BUG (this side only):
  l2_unsquared -> reg term written with .norm(2) without .pow(2): the Frobenius norms of the
              gathered embeddings, not their squares
  decay_tables -> RAdam(model.parameters(), weight_decay=1e-2): one group, the embedding table
              decayed too (every row moves, not only the rows of the batch)
"""
import numpy as np
import torch
from _train_common import bug
from torch import nn

BUGS = {"l2_unsquared", "decay_tables"} | {"paddle_keep_prob"}  # the paddle side's, ignored here
N_USERS, N_ITEMS, EMB_DIM, MLP_DIM, BATCH = 40, 60, 16, 32, 16
LR, BETAS, EPS, WEIGHT_DECAY, REG_WEIGHT = 0.05, (0.9, 0.999), 1e-8, 1e-2, 1e-3

_DATA = {}


def sample(step):
    rng = np.random.default_rng(3100 + step)
    users = rng.integers(0, N_USERS, BATCH).astype(np.int64)
    pos_items = rng.integers(0, N_ITEMS, BATCH).astype(np.int64)
    neg_items = ((pos_items + 1 + rng.integers(0, N_ITEMS - 1, BATCH)) % N_ITEMS).astype(np.int64)
    return users, pos_items, neg_items


def mlp():
    return nn.Sequential(nn.Linear(EMB_DIM, MLP_DIM), nn.ReLU(), nn.Dropout(0.1), nn.Linear(MLP_DIM, EMB_DIM))


class BPRRecommender(nn.Module):
    def __init__(self):
        super().__init__()
        self.item_mlp = mlp()
        self.user_mlp = mlp()
        self.embedding = nn.Embedding(N_USERS + N_ITEMS, EMB_DIM)

    def forward(self, users, pos_items, neg_items):
        u_ego = self.embedding(users)
        item_ego = self.embedding(torch.cat([pos_items, neg_items]) + N_USERS)
        u = self.user_mlp(u_ego)
        i = self.item_mlp(item_ego)
        n = users.shape[0]
        pos_scores = torch.bmm(u.unsqueeze(1), i[:n].unsqueeze(2)).view(-1)
        neg_scores = torch.bmm(u.unsqueeze(1), i[n:].unsqueeze(2)).view(-1)
        return pos_scores, neg_scores, (u_ego, item_ego[:n], item_ego[n:])


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = BPRRecommender()
    m.train()
    return m


def inputs(step=0):
    users, pos_items, neg_items = sample(step)
    return (torch.from_numpy(users), torch.from_numpy(pos_items), torch.from_numpy(neg_items)), {}


def loss(output):
    pos_scores, neg_scores, egos = output
    mf_loss = torch.nn.functional.softplus(neg_scores - pos_scores).mean()
    if bug(BUGS) == "l2_unsquared":
        reg = sum(e.norm(2) for e in egos)
    else:
        reg = sum(e.norm(2).pow(2) for e in egos)
    return mf_loss + REG_WEIGHT * reg / 2 / pos_scores.shape[0]


def optimizer(model):
    if bug(BUGS) == "decay_tables":
        return torch.optim.RAdam(model.parameters(), lr=LR, betas=BETAS, eps=EPS, weight_decay=WEIGHT_DECAY)
    towers = list(model.item_mlp.parameters()) + list(model.user_mlp.parameters())
    return torch.optim.RAdam([{"params": towers, "weight_decay": WEIGHT_DECAY},
                              {"params": [model.embedding.weight], "weight_decay": 0.0}],
                             lr=LR, betas=BETAS, eps=EPS)
