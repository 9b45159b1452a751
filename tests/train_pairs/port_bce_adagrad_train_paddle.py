"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a multi-label text
(tag) classifier over mean-pooled word embeddings, trained 3 steps with pos_weight BCE and Adagrad
under a linear learning-rate warm-up.

    TagClassifier: registers out (Linear 32 -> 5) first, then embedding (nn.Embedding 60 x 16),
        hidden (Linear 16 -> 32), dropout (nn.Dropout, p 0.0: the config's dropout is 0);
        calls embedding, a masked mean over the non-padding tokens (inline: ids != 0), hidden,
        F.relu (functional), dropout, out
    forward(ids [8, 12] int64, 0-padded) -> logits [8, 5]
model.train() (the dropout layer has p 0).

Data: inputs(step): 8 documents from default_rng(7600 + step), lengths 4..12, token ids 1..59,
padded with 0 to [8, 12]; 5 tags, multi-hot targets with prevalences 0.25 / 0.4 / 0.15 / 0.5 / 0.3
(kept for loss()).
Loss: F.binary_cross_entropy_with_logits(logits, targets, pos_weight=[3, 1.5, 5, 1, 2.3]) (mean
over the 8 x 5 entries).
Optimizer: paddle.optimizer.Adagrad(learning_rate=LinearWarmup(0.05, warmup_steps 4, start_lr
0.0125, end_lr 0.05), epsilon 1e-10, initial_accumulator_value 0.1,
weight_decay=paddle.regularizer.L2Decay(1e-4) (added to the gradient before the accumulator, every
parameter)); optimizer() returns (optimizer, scheduler), stepped after every update: lr 0.0125,
0.021875, 0.03125 for updates 1..3.
Init: paddle.seed(75) and paddle's default init; then (numpy default_rng(76)) the embedding
N(0, 0.3), Linear biases N(0, 0.1), the output bias + the tags' log prior odds.

PADIFF_BUG (this side only):
  paddle_acc_init_default -> Adagrad built without initial_accumulator_value (paddle's default
              0.0): the first update is lr * g / (|g| + eps), about lr * sign(g), per element
  paddle_dropout_default -> nn.Dropout() without the config's p: paddle's default p 0.5
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_acc_init_default", "paddle_dropout_default"} | {"torch_weight_not_pos_weight"}  # torch's, ignored
VOCAB, EMB, HIDDEN, N_TAGS, BATCH, MAX_LEN = 60, 16, 32, 5, 8, 12
DROPOUT = 0.0
PREVALENCE = np.array([0.25, 0.4, 0.15, 0.5, 0.3])
POS_WEIGHT = np.array([3.0, 1.5, 5.0, 1.0, 2.3], "float32")
LR, WARMUP, WARMUP_START, ADA_EPS, ACC_INIT, L2 = 0.05, 4, 0.25, 1e-10, 0.1, 1e-4

_BATCH = {}


def documents(step):
    """Token-id lists and multi-hot tags (numpy): the same draw on both sides."""
    rng = np.random.default_rng(7600 + step)
    lengths = rng.integers(4, MAX_LEN + 1, BATCH)
    docs = [rng.integers(1, VOCAB, n).astype("int64") for n in lengths]
    tags = (rng.random((BATCH, N_TAGS)) < PREVALENCE).astype("float32")
    return docs, tags


class TagClassifier(nn.Layer):
    def __init__(self, dropout):
        super().__init__()
        self.out = nn.Linear(HIDDEN, N_TAGS)
        self.embedding = nn.Embedding(VOCAB, EMB)
        self.hidden = nn.Linear(EMB, HIDDEN)
        self.dropout = nn.Dropout(dropout) if dropout is not None else nn.Dropout()

    def forward(self, ids):
        mask = (ids != 0).astype(self.embedding.weight.dtype).unsqueeze(-1)
        pooled = (self.embedding(ids) * mask).sum(axis=1) / mask.sum(axis=1)
        return self.out(self.dropout(F.relu(self.hidden(pooled))))


def model():
    b = bug(BUGS)  # an unknown name fails early
    paddle.seed(75)
    m = TagClassifier(None if b == "paddle_dropout_default" else DROPOUT)
    rng = np.random.default_rng(76)
    m.embedding.weight.set_value(rng.normal(0.0, 0.3, (VOCAB, EMB)).astype("float32"))
    m.hidden.bias.set_value(rng.normal(0.0, 0.1, HIDDEN).astype("float32"))
    prior = np.log(PREVALENCE / (1.0 - PREVALENCE))
    m.out.bias.set_value((prior + rng.normal(0.0, 0.1, N_TAGS)).astype("float32"))
    m.train()
    return m


def inputs(step=0):
    docs, tags = documents(step)
    ids = np.zeros((BATCH, MAX_LEN), "int64")
    for i, d in enumerate(docs):
        ids[i, : len(d)] = d
    _BATCH["tags"] = tags
    return (paddle.to_tensor(ids),), {}


def loss(output):
    dt = output.dtype
    tags = paddle.to_tensor(_BATCH["tags"]).astype(dt)
    return F.binary_cross_entropy_with_logits(output, tags, pos_weight=paddle.to_tensor(POS_WEIGHT).astype(dt))


def optimizer(model):
    sched = paddle.optimizer.lr.LinearWarmup(learning_rate=LR, warmup_steps=WARMUP, start_lr=WARMUP_START * LR,
                                             end_lr=LR)
    kw = {} if bug(BUGS) == "paddle_acc_init_default" else {"initial_accumulator_value": ACC_INIT}
    opt = paddle.optimizer.Adagrad(learning_rate=sched, epsilon=ADA_EPS, parameters=model.parameters(),
                                   weight_decay=paddle.regularizer.L2Decay(L2), **kw)
    return opt, sched
