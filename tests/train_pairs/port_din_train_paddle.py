"""Hand-written port in TRAINING mode, paddle side (written by "person A", after the original
TensorFlow DIN code of zhougr1993/DeepInterestNetwork): a Deep Interest Network CTR model trained
3 steps.

    DIN: registers item_emb (Embedding 50 x 8), cat_emb (Embedding 10 x 8), attn (AttentionUnit),
        fc1 (Linear 48 -> 32), dice1 (Dice 32), fc2 (Linear 32 -> 16), dice2 (Dice 16),
        dropout (Dropout 0.2, called twice), fc_out (Linear 16 -> 1)
    forward(item, cat, hist_item, hist_cat, hist_len) -> logit [B, 1]
        query = concat(item_emb(item), cat_emb(cat))                     [B, 16]
        keys = concat(item_emb(hist_item), cat_emb(hist_cat))            [B, T, 16]
        interest = attn(query, keys, mask = arange(T) < hist_len)        [B, 16]
        x = concat(interest, query, interest * query)                    [B, 48]
        x = dropout(dice1(fc1(x))); x = dropout(dice2(fc2(x))); logit = fc_out(x)
    AttentionUnit: fc1 (Linear 64 -> 32), act1 (PReLU(32, data_format="NLC")), fc2 (Linear 32 -> 16),
        act2 (PReLU(16, "NLC")), fc3 (Linear 16 -> 1) on [q, k, q - k, q * k] over [B, T, 64];
        scores of padded positions set to -2^32 + 1 (the TF code's paddings), divided by sqrt(16),
        softmax over T, weighted sum of the keys (matmul)
    Dice: bn (BatchNorm1D(dim, momentum 0.9, epsilon 1e-8), affine), alpha [dim] (create_parameter);
        p = sigmoid(bn(x)); out = p * x + (1 - p) * alpha * x
Batch 8, history length T = 6 (padded with id 0, lengths 2..6), embedding dim 8; model.train().
Per step (`inputs(step)`, default_rng(2500 + step)): target item/category, history, lengths, click
labels (the same numbers on both sides). Loss: F.binary_cross_entropy_with_logits (mean) of the
logit against the label.
Optimizer: Adagrad(learning_rate 0.05, epsilon 1e-10, initial_accumulator_value 0.1 (the TF
default), weight_decay 1e-3 (an L2Decay added to the gradient)) over the trainable parameters.
Init: paddle.seed(0), then every parameter redrawn (numpy default_rng(25)): embeddings N(0, 0.3),
Linear weights N(0, 1/sqrt(fan_in)), biases N(0, 0.1), PReLU slopes 0.25 + N(0, 0.05), Dice
alphas 0.2 + N(0, 0.1), BN weights 1 + N(0, 0.1), biases N(0, 0.1), running means N(0, 0.1),
running variances 1 + |N(0, 0.3)|.

PADIFF_BUG (this side only):
  paddle_keep_prob -> nn.Dropout(p=0.8): the TF code's keep_prob 0.8 passed as paddle's drop
              probability (drops 80 % instead of 20 %)
"""
import math

import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_keep_prob"} | {"torch_bce_sum", "torch_adagrad_acc0"}  # the torch side's, ignored here
N_ITEM, N_CAT, EMB, HIST, BATCH = 50, 10, 8, 6, 8
LR, ADA_EPS, ADA_INIT_ACC, WD = 0.05, 1e-10, 0.1, 1e-3
DROP_P, KEEP_PROB = 0.2, 0.8  # the TF code: keep_prob = 1 - dropout rate

_BATCH = {}


def make_batch(step):
    """One step's numpy batch: target item / category, padded history, lengths, labels."""
    rng = np.random.default_rng(2500 + step)
    item_cat = rng.integers(1, N_CAT, N_ITEM)  # category of each item (item 0 = padding)
    item = rng.integers(1, N_ITEM, BATCH)
    lens = rng.integers(2, HIST + 1, BATCH)
    hist = rng.integers(1, N_ITEM, (BATCH, HIST))
    hist[np.arange(HIST)[None, :] >= lens[:, None]] = 0
    hist_cat = np.where(hist > 0, item_cat[hist], 0)
    label = rng.integers(0, 2, BATCH).astype("float32")
    return (item.astype("int64"), item_cat[item].astype("int64"), hist.astype("int64"),
            hist_cat.astype("int64"), lens.astype("int64"), label)


class AttentionUnit(nn.Layer):
    """DIN's local activation unit over [q, k, q - k, q * k], masked softmax pooling."""

    def __init__(self, dim, hidden=(32, 16)):
        super().__init__()
        self.fc1 = nn.Linear(4 * dim, hidden[0])
        self.act1 = nn.PReLU(hidden[0], init=0.25, data_format="NLC")
        self.fc2 = nn.Linear(hidden[0], hidden[1])
        self.act2 = nn.PReLU(hidden[1], init=0.25, data_format="NLC")
        self.fc3 = nn.Linear(hidden[1], 1)

    def forward(self, query, keys, mask):
        q = paddle.expand(query.unsqueeze(1), keys.shape)
        din_all = paddle.concat([q, keys, q - keys, q * keys], axis=-1)
        h = self.act1(self.fc1(din_all))
        h = self.act2(self.fc2(h))
        scores = self.fc3(h).squeeze(-1)  # [B, T]
        paddings = paddle.full_like(scores, -(2.0 ** 32) + 1)
        scores = paddle.where(mask, scores, paddings)
        scores = scores / math.sqrt(keys.shape[-1])
        weights = F.softmax(scores, axis=-1)
        return paddle.matmul(weights.unsqueeze(1), keys).squeeze(1)


class Dice(nn.Layer):
    def __init__(self, dim):
        super().__init__()
        self.bn = nn.BatchNorm1D(dim, momentum=0.9, epsilon=1e-8)
        self.alpha = self.create_parameter([dim], default_initializer=nn.initializer.Constant(0.0))

    def forward(self, x):
        p = F.sigmoid(self.bn(x))
        return p * x + (1.0 - p) * self.alpha * x


class DIN(nn.Layer):
    def __init__(self, drop_p):
        super().__init__()
        self.item_emb = nn.Embedding(N_ITEM, EMB)
        self.cat_emb = nn.Embedding(N_CAT, EMB)
        self.attn = AttentionUnit(2 * EMB)
        self.fc1 = nn.Linear(6 * EMB, 32)
        self.dice1 = Dice(32)
        self.fc2 = nn.Linear(32, 16)
        self.dice2 = Dice(16)
        self.dropout = nn.Dropout(p=drop_p)
        self.fc_out = nn.Linear(16, 1)

    def forward(self, item, cat, hist_item, hist_cat, hist_len):
        query = paddle.concat([self.item_emb(item), self.cat_emb(cat)], axis=-1)
        keys = paddle.concat([self.item_emb(hist_item), self.cat_emb(hist_cat)], axis=-1)
        mask = paddle.arange(hist_item.shape[1]).unsqueeze(0) < hist_len.unsqueeze(1)
        interest = self.attn(query, keys, mask)
        x = paddle.concat([interest, query, interest * query], axis=-1)
        x = self.dropout(self.dice1(self.fc1(x)))
        x = self.dropout(self.dice2(self.fc2(x)))
        return self.fc_out(x)


def _redraw(m):
    rng = np.random.default_rng(25)
    for name, p in m.named_parameters():
        if name.endswith("._mean"):  # running statistics of a model that has been training a while
            p.set_value(rng.normal(0.0, 0.1, p.shape).astype("float32"))
            continue
        if name.endswith("._variance"):
            p.set_value((1.0 + np.abs(rng.normal(0.0, 0.3, p.shape))).astype("float32"))
            continue
        leaf = name.rsplit(".", 1)[-1]
        if name.endswith("_emb.weight"):
            v = rng.normal(0.0, 0.3, p.shape)
        elif name.startswith("attn.act") or leaf == "alpha":
            v = (0.25 + rng.normal(0.0, 0.05, p.shape)) if name.startswith("attn.act") else 0.2 + rng.normal(0.0, 0.1, p.shape)
        elif ".bn." in name and leaf == "weight":
            v = 1.0 + rng.normal(0.0, 0.1, p.shape)
        elif leaf == "bias":
            v = rng.normal(0.0, 0.1, p.shape)
        else:  # Linear weight [in, out]
            v = rng.normal(0.0, 1.0 / math.sqrt(p.shape[0]), p.shape)
        p.set_value(v.astype("float32"))


def model():
    b = bug(BUGS)
    paddle.seed(0)
    m = DIN(drop_p=KEEP_PROB if b == "paddle_keep_prob" else DROP_P)
    _redraw(m)
    m.train()
    return m


def inputs(step=0):
    item, cat, hist, hist_cat, lens, label = make_batch(step)
    _BATCH["label"] = label
    return tuple(paddle.to_tensor(a) for a in (item, cat, hist, hist_cat, lens)), {}


def loss(output):
    label = paddle.to_tensor(_BATCH["label"]).astype(output.dtype).unsqueeze(-1)
    return F.binary_cross_entropy_with_logits(output, label)


def optimizer(model):
    params = [p for p in model.parameters() if not p.stop_gradient]
    return paddle.optimizer.Adagrad(learning_rate=LR, epsilon=ADA_EPS, parameters=params,
                                    weight_decay=WD, initial_accumulator_value=ADA_INIT_ACC)
