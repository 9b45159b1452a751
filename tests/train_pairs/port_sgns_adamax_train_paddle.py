"""Hand-written port in TRAINING mode, paddle side (written by "person A"): skip-gram with
negative sampling (word2vec SGNS, Mikolov et al. 2013), 3 steps, one batch of (centre, context,
K negatives) per step.

    SkipGramNS: registers in_embed (InputEmbedding: create_parameter weight [40, 16]; looked up
        with paddle.gather, then inline F.dropout(p 0.1, training=self.training) on the centre
        vectors), out_embed (nn.Embedding 40 x 16, called twice: contexts, then negatives)
    forward(centre [B], context [B], negatives [B, K]) -> (pos_score [B], neg_score [B, K])
        scores are elementwise products summed over the embedding axis:
        pos = (u * v).sum(-1), neg = (n * u.unsqueeze(1)).sum(-1)

Data: inputs(step): 16 (centre, context) pairs from default_rng(3200 + step) (context = centre
+- 1..2 in a 40-word vocabulary, wrapped), and K = 5 negatives per pair drawn from the unigram
distribution ** 0.75 of a Zipf-like count table (word2vec's noise distribution) - deterministic.
Loss (SGNS): -(log_sigmoid(pos) + sum_k log_sigmoid(-neg_k)).mean() over the batch (the K
negative terms are SUMMED, as in word2vec).
Optimizer: paddle.optimizer.Adamax(epsilon 1e-12) at paddle's default learning rate 0.001 (beta1
0.9, beta2 0.999: paddle's defaults) over both tables; no weight decay, no clipping.
Init (person A): paddle.seed(32); both tables N(0, 0.3) (trained-looking vectors, not word2vec's
zero output table).

PADIFF_BUG (this side only):
  paddle_neg_mean     -> the negatives' log-sigmoid terms are AVERAGED over the K samples
              (.mean(-1)) instead of summed: the negative term is weighted 1/K
  paddle_drop_unset   -> SkipGramNS builds its InputEmbedding without passing the dropout rate:
              the layer's own default dropout=0.0 is used (the F.dropout call stays, with p 0)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_neg_mean", "paddle_drop_unset"} | {"torch_lr_default"}  # the torch side's, ignored here
VOCAB, DIM, BATCH, K = 40, 16, 16, 5
DROPOUT = 0.1
EPS = 1e-12  # see the truth's conventions: paddle adds epsilon inside the decayed norm, torch to |g|

_NOISE = None


def noise_dist():
    counts = 1000.0 / np.arange(1, VOCAB + 1)  # Zipf-like word counts
    p = counts ** 0.75
    return p / p.sum()


def batch(step):
    rng = np.random.default_rng(3200 + step)
    centre = rng.integers(0, VOCAB, BATCH)
    offset = rng.choice(np.array([-2, -1, 1, 2]), BATCH)
    context = (centre + offset) % VOCAB
    negatives = rng.choice(VOCAB, size=(BATCH, K), p=noise_dist())
    return centre.astype("int64"), context.astype("int64"), negatives.astype("int64")


class InputEmbedding(nn.Layer):
    """The centre-word table: a gathered parameter with dropout on the looked-up vectors."""

    def __init__(self, num, dim, dropout=0.0):
        super().__init__()
        self.weight = self.create_parameter([num, dim], attr=paddle.ParamAttr(
            initializer=nn.initializer.Normal(0.0, 0.3)))
        self.p = dropout

    def forward(self, ids):
        v = paddle.gather(self.weight, ids, axis=0)
        return F.dropout(v, p=self.p, training=self.training)


class SkipGramNS(nn.Layer):
    def __init__(self):
        super().__init__()
        if bug(BUGS) == "paddle_drop_unset":
            self.in_embed = InputEmbedding(VOCAB, DIM)
        else:
            self.in_embed = InputEmbedding(VOCAB, DIM, dropout=DROPOUT)
        self.out_embed = nn.Embedding(VOCAB, DIM, weight_attr=paddle.ParamAttr(
            initializer=nn.initializer.Normal(0.0, 0.3)))

    def forward(self, centre, context, negatives):
        u = self.in_embed(centre)  # [B, D]
        v = self.out_embed(context)  # [B, D]
        n = self.out_embed(negatives)  # [B, K, D]
        pos = (u * v).sum(-1)
        neg = (n * u.unsqueeze(1)).sum(-1)
        return pos, neg


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(32)
    m = SkipGramNS()
    m.train()
    return m


def inputs(step=0):
    centre, context, negatives = batch(step)
    return (paddle.to_tensor(centre), paddle.to_tensor(context), paddle.to_tensor(negatives)), {}


def loss(output):
    pos, neg = output
    neg_term = F.log_sigmoid(-neg)
    neg_term = neg_term.mean(-1) if bug(BUGS) == "paddle_neg_mean" else neg_term.sum(-1)
    return -(F.log_sigmoid(pos) + neg_term).mean()


def optimizer(model):
    return paddle.optimizer.Adamax(epsilon=EPS, parameters=model.parameters())
