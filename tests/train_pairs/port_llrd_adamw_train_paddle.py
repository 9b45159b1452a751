"""Hand-written port in TRAINING mode, paddle side ("person A"): a small post-norm transformer
encoder classifier fine-tuned with LAYER-WISE LEARNING-RATE DECAY (LLRD).

    LLRDClassifier: registers word_emb (Embedding 60 x 32), pos_emb (Embedding 16 x 32), emb_norm
        (LayerNorm), emb_drop (Dropout 0.1), encoder (paddle.nn.TransformerEncoder of 3
        paddle.nn.TransformerEncoderLayer: d_model 32, 4 heads, FFN 64, gelu, dropout 0.1,
        attn_dropout 0.1, act_dropout 0.0, post-norm), pooler (Linear 32 -> 32, tanh inline),
        head_drop (Dropout 0.1), classifier (Linear 32 -> 3)
    forward(ids, keep) -> logits [B, 3] (the first token, pooled); keep [B, 1, 1, L] bool (True = a
        real token), turned by paddle into an additive -1e9 mask

Loss: class-weighted cross entropy, F.cross_entropy(logits, y, weight=[0.6, 1.0, 2.4]) (the weighted
mean: divided by the sum of the targets' weights).
Optimizer (person A builds the groups from NAME PATTERNS): depth 0 = names starting with word_emb /
pos_emb / emb_norm, depth i + 1 = "encoder.layers.<i>.", depth 4 = the rest (pooler, classifier);
one group per (depth, decayed or not) with 'learning_rate' = 0.75 ** (4 - depth) (a paddle group's
learning_rate is a SCALE of the optimizer's learning rate) and 'weight_decay' 0.01, or 0.0 for names
ending in "bias" or containing "norm". AdamW(beta1 0.9, beta2 0.999, epsilon 1e-8) on the built-in
schedule LinearWarmup(PolynomialDecay(2e-3, decay_steps 9, end_lr 0, power 1), warmup_steps 1,
start_lr 2e-4, end_lr 2e-3): lr 2e-4, 2e-3, 1.778e-3 for updates 1..3, times each group's scale.
Init: paddle.seed(4300), then matrices N(0, 0.15), biases N(0, 0.1), LayerNorm scales 1 + N(0, 0.1).

PADIFF_BUG (this side only):
  paddle_norm_decayed -> the no-decay patterns copied from an HF script, ("bias", "LayerNorm.weight"):
                 this model's norms are called emb_norm / norm1 / norm2, so their scales are decayed
  paddle_act_dropout  -> TransformerEncoderLayer built without act_dropout=0.0: paddle's default
                 act_dropout is `dropout` (0.1), an extra dropout after the FFN's gelu in every layer
"""
import re

import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug, randomize_paddle
from paddle import nn

BUGS = {"paddle_norm_decayed", "paddle_act_dropout"} | {"torch_loss_mean"}  # the torch side's, ignored here
VOCAB, MAX_POS, D, HEADS, FFN, N_LAYERS, N_CLS = 60, 16, 32, 4, 64, 3, 3
BATCH, SEQ = 8, 10
P_DROP = 0.1
BASE_LR, LLRD, WD = 2e-3, 0.75, 0.01
TOTAL_STEPS, WARMUP_STEPS, WARMUP_START = 10, 1, 0.1
CLASS_W = np.array([0.6, 1.0, 2.4], "float32")

_BATCH = {}


def batch(step):
    """ids [8, 10] (0 = padding after each sequence's length), labels [8]: the same on both sides."""
    rng = np.random.default_rng(4310 + step)
    lengths = rng.integers(5, SEQ + 1, BATCH)
    ids = rng.integers(1, VOCAB, (BATCH, SEQ)).astype("int64")
    keep = np.arange(SEQ)[None, :] < lengths[:, None]
    ids[~keep] = 0
    labels = rng.integers(0, N_CLS, BATCH).astype("int64")
    return ids, keep, labels


class LLRDClassifier(nn.Layer):
    def __init__(self):
        super().__init__()
        self.word_emb = nn.Embedding(VOCAB, D)
        self.pos_emb = nn.Embedding(MAX_POS, D)
        self.emb_norm = nn.LayerNorm(D)
        self.emb_drop = nn.Dropout(P_DROP)
        act_dropout = {} if bug(BUGS) == "paddle_act_dropout" else {"act_dropout": 0.0}
        layer = nn.TransformerEncoderLayer(D, HEADS, FFN, dropout=P_DROP, activation="gelu",
                                           attn_dropout=P_DROP, **act_dropout)
        self.encoder = nn.TransformerEncoder(layer, N_LAYERS)
        self.pooler = nn.Linear(D, D)
        self.head_drop = nn.Dropout(P_DROP)
        self.classifier = nn.Linear(D, N_CLS)

    def forward(self, ids, keep):
        pos = paddle.arange(ids.shape[1]).unsqueeze(0)
        h = self.emb_drop(self.emb_norm(self.word_emb(ids) + self.pos_emb(pos)))
        h = self.encoder(h, keep)
        pooled = paddle.tanh(self.pooler(h[:, 0]))
        return self.classifier(self.head_drop(pooled))


def model():
    bug(BUGS)
    paddle.seed(4300)
    m = LLRDClassifier()
    randomize_paddle(m, std=0.15, seed=4301)
    m.train()
    return m


def inputs(step=0):
    ids, keep, labels = batch(step)
    _BATCH["labels"] = labels
    return (paddle.to_tensor(ids), paddle.to_tensor(keep[:, None, None, :])), {}


def loss(logits):
    y = paddle.to_tensor(_BATCH["labels"])
    w = paddle.to_tensor(CLASS_W).astype(logits.dtype)
    return F.cross_entropy(logits, y, weight=w)


def _depth(name):
    if name.startswith(("word_emb", "pos_emb", "emb_norm")):
        return 0
    m = re.match(r"encoder\.layers\.(\d+)\.", name)
    return int(m.group(1)) + 1 if m else N_LAYERS + 1


def optimizer(model):
    no_decay = ("bias", "LayerNorm.weight") if bug(BUGS) == "paddle_norm_decayed" else ("bias", "norm")
    groups = {}
    for name, p in model.named_parameters():
        depth = _depth(name)
        decayed = not any(nd in name for nd in no_decay)
        g = groups.setdefault((depth, decayed), {"params": [], "learning_rate": LLRD ** (N_LAYERS + 1 - depth),
                                                 "weight_decay": WD if decayed else 0.0})
        g["params"].append(p)
    sched = paddle.optimizer.lr.LinearWarmup(
        paddle.optimizer.lr.PolynomialDecay(BASE_LR, decay_steps=TOTAL_STEPS - WARMUP_STEPS, end_lr=0.0, power=1.0),
        warmup_steps=WARMUP_STEPS, start_lr=BASE_LR * WARMUP_START, end_lr=BASE_LR)
    opt = paddle.optimizer.AdamW(learning_rate=sched, beta1=0.9, beta2=0.999, epsilon=1e-8,
                                 parameters=[groups[k] for k in sorted(groups)], weight_decay=WD)
    return opt, sched
