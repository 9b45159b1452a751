"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_siamese_train_paddle.py) the sentence-transformers way:

    embedding_net (ONE EmbeddingNet, called three times per forward: anchor, positive, negative):
        token_embedding nn.Embedding(64, 32), mean pooling over the attention mask
        (sum(emb * mask) / clamp(sum(mask), min=1e-9), mask = ids != 0),
        projection = nn.Sequential(Linear(32, 48), LayerNorm(48), GELU(), Dropout(0.1), Linear(48, 24,
        bias=False))
        (projection.0 .. projection.4; Linear weights [out, in])
    TripletNetwork.forward(anchor, positive, negative) -> (emb_a, emb_p, emb_n)
Dropout 0.1: 3 calls per forward (projection.3, once per tower call), same order and shapes as the
paddle side ([8, 48]).

Loss: sentence-transformers TripletLoss written out (euclidean distance): relu(pairwise_distance(a, p)
- pairwise_distance(a, n) + margin).mean(), margin 1.0 (torch's pairwise_distance adds eps 1e-6 to
the difference, as paddle's does).
Optimizer: AdamW(lr 3e-3, betas (0.9, 0.999), eps 1e-8) with two parameter groups by shape (ndim >= 2:
weight_decay 0.1; biases and the LayerNorm: 0.0) - the sentence-transformers name list ("bias",
"LayerNorm.weight", ...) would not match nn.Sequential's index names, so the groups go by ndim;
scheduler transformers.get_linear_schedule_with_warmup(num_warmup_steps=2, num_training_steps=8):
lr 0, 1.5e-3, 3e-3, 2.5e-3 for updates 1..4. No gradient clipping.

PADIFF_BUG (this side only):
  margin_sign -> relu(d_ap - d_an - margin): the margin's sign flipped (a triplet counts as violated
                 only when the positive is farther than the negative by more than the margin)
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"margin_sign"} | {"paddle_ln_decay", "paddle_warmup_last_epoch"}  # the paddle side's, ignored here
config = {"vocab_size": 64, "word_embedding_dimension": 32, "hidden_dim": 48, "out_features": 24,
          "dropout": 0.1}
triplet_margin = 1.0
learning_rate, weight_decay, warmup_steps, num_training_steps = 3e-3, 0.1, 2, 8


def _batch():  # the paddle spec's batch, drawn the same way
    rng = np.random.default_rng(37)
    lengths = (8, 6, 7, 5, 8, 7, 6, 8)
    anchor = np.zeros((8, 8), "int64")
    for b, n in enumerate(lengths):
        anchor[b, :n] = rng.integers(1, 64, n)
    positive, negative = anchor.copy(), anchor.copy()
    for b, n in enumerate(lengths):
        positive[b, rng.choice(n, 3, replace=False)] = rng.integers(1, 64, 3)
        negative[b, rng.choice(n, 4, replace=False)] = rng.integers(1, 64, 4)
    return anchor, positive, negative


anchor_ids, positive_ids, negative_ids = _batch()


def mean_pooling(token_embeddings, attention_mask):
    mask = attention_mask.unsqueeze(-1).expand(token_embeddings.size()).to(token_embeddings.dtype)
    return torch.sum(token_embeddings * mask, 1) / torch.clamp(mask.sum(1), min=1e-9)


class EmbeddingNet(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, h = cfg["word_embedding_dimension"], cfg["hidden_dim"]
        self.token_embedding = nn.Embedding(cfg["vocab_size"], d)
        self.projection = nn.Sequential(nn.Linear(d, h), nn.LayerNorm(h), nn.GELU(), nn.Dropout(cfg["dropout"]),
                                        nn.Linear(h, cfg["out_features"], bias=False))

    def forward(self, input_ids):
        pooled = mean_pooling(self.token_embedding(input_ids), input_ids.ne(0))
        return self.projection(pooled)


class TripletNetwork(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embedding_net = EmbeddingNet(cfg)

    def forward(self, anchor, positive, negative):
        return self.embedding_net(anchor), self.embedding_net(positive), self.embedding_net(negative)


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = TripletNetwork(config)
    m.train()
    return m


def inputs():
    return (torch.from_numpy(anchor_ids), torch.from_numpy(positive_ids), torch.from_numpy(negative_ids)), {}


def loss(output):
    rep_anchor, rep_pos, rep_neg = output
    distance_pos = F.pairwise_distance(rep_anchor, rep_pos, p=2)
    distance_neg = F.pairwise_distance(rep_anchor, rep_neg, p=2)
    if bug(BUGS) == "margin_sign":
        losses = F.relu(distance_pos - distance_neg - triplet_margin)
    else:
        losses = F.relu(distance_pos - distance_neg + triplet_margin)
    return losses.mean()


def optimizer(model):
    from transformers import get_linear_schedule_with_warmup

    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.ndim >= 2], "weight_decay": weight_decay},
              {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=learning_rate, betas=(0.9, 0.999), eps=1e-8)
    sched = get_linear_schedule_with_warmup(opt, num_warmup_steps=warmup_steps,
                                            num_training_steps=num_training_steps)
    return opt, sched
