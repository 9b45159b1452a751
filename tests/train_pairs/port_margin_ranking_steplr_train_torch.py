"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_margin_ranking_steplr_train_paddle.py): a dual-encoder ranker, 3 steps.

    DualEncoder: registers encoder (TowerEncoder), one module for queries and documents;
        forward(q_ids, pos_ids, neg_ids) encodes q, pos, neg in that order and returns
        (F.cosine_similarity(q, pos), F.cosine_similarity(q, neg)), [8] each
    TowerEncoder: registers bag (EmbeddingBag 60 x 16, mode "mean", padding_idx 0: the pad
        tokens are left out of the mean), proj = Sequential(Linear 16 -> 32, LayerNorm 32, ReLU,
        Dropout 0.1, Linear 32 -> 16) (.0-.4)

Loss: nn.MarginRankingLoss(margin=0.3)(pos_score, neg_score, target=+1).
Optimizer: torch.optim.SGD(lr 0.5, momentum 0.9, dampening 0.1) (the buffer starts at the first
gradient, undampened; then buf = 0.9 buf + 0.9 g), no weight decay, and StepLR(step_size=1,
gamma=0.5) stepped after every update: lr 0.5, 0.25, 0.125; optimizer() returns (optimizer,
scheduler).
Data: the same triples as the paddle side (default_rng(5100 + step), drawn by the same recipe).

PADIFF_BUG (this side only):
  torch_margin_default -> nn.MarginRankingLoss() built without the margin: torch's default 0.0
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_margin_default"} | {"paddle_damp_first", "paddle_keep_prob"}  # the paddle side's, ignored here
VOCAB_SIZE, EMBED_DIM, HIDDEN_DIM, OUT_DIM = 60, 16, 32, 16
BATCH, MAX_Q, MAX_D = 8, 6, 10
MARGIN, DROPOUT = 0.3, 0.1
LR, MOMENTUM, DAMPENING, STEP_GAMMA = 0.5, 0.9, 0.1, 0.5


def sample_triples(step):
    rng = np.random.default_rng(5100 + step)
    queries = np.zeros((BATCH, MAX_Q), np.int64)
    positives = np.zeros((BATCH, MAX_D), np.int64)
    negatives = np.zeros((BATCH, MAX_D), np.int64)
    for i in range(BATCH):
        len_q, len_p, len_n = rng.integers(3, MAX_Q + 1), rng.integers(5, MAX_D + 1), rng.integers(5, MAX_D + 1)
        queries[i, :len_q] = rng.integers(1, VOCAB_SIZE, len_q)
        overlap = rng.choice(queries[i, :len_q], len_p // 3)
        fresh = rng.integers(1, VOCAB_SIZE, len_p - len_p // 3)
        positives[i, :len_p] = rng.permutation(np.concatenate([overlap, fresh]))
        negatives[i, :len_n] = rng.integers(1, VOCAB_SIZE, len_n)
    return queries, positives, negatives


class TowerEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(VOCAB_SIZE, EMBED_DIM, mode="mean", padding_idx=0)
        self.proj = nn.Sequential(
            nn.Linear(EMBED_DIM, HIDDEN_DIM), nn.LayerNorm(HIDDEN_DIM), nn.ReLU(), nn.Dropout(DROPOUT),
            nn.Linear(HIDDEN_DIM, OUT_DIM),
        )

    def forward(self, ids):
        return self.proj(self.bag(ids))


class DualEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = TowerEncoder()

    def forward(self, q_ids, pos_ids, neg_ids):
        q = self.encoder(q_ids)
        pos = self.encoder(pos_ids)
        neg = self.encoder(neg_ids)
        return F.cosine_similarity(q, pos, dim=-1), F.cosine_similarity(q, neg, dim=-1)


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = DualEncoder()
    m.train()
    return m


def inputs(step=0):
    return tuple(torch.from_numpy(a) for a in sample_triples(step)), {}


def loss(output):
    pos_score, neg_score = output
    criterion = nn.MarginRankingLoss() if bug(BUGS) == "torch_margin_default" else nn.MarginRankingLoss(margin=MARGIN)
    return criterion(pos_score, neg_score, torch.ones_like(pos_score))


def optimizer(model):
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM, dampening=DAMPENING)
    return opt, torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=STEP_GAMMA)
