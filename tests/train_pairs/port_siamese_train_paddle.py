"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a siamese (two-tower,
SHARED weights) sentence encoder trained with a triplet margin loss for 4 steps.

    encoder (ONE TextEncoder, called three times per forward: anchor, positive, negative):
        registered fc1 (Linear 32 -> 48, weight [in, out]), norm (LayerNorm 48), drop (Dropout 0.1),
        fc2 (Linear 48 -> 24, no bias), then word_emb (Embedding 64 x 32) - the embedding is registered LAST
        although it is called first
        forward: masked mean of word_emb(ids) over the non-pad tokens (id 0 = pad), fc1, norm,
        exact GELU (functional), drop, fc2
    SiameseNet.forward(anchor, positive, negative) -> (emb_a, emb_p, emb_n), each [8, 24]
Dropout 0.1: 3 calls per forward (one per tower call, [8, 48]). model.train().

Data: default_rng(37): anchors [8, 8] (ids 1..63, pad 0 after lengths 8, 6, 7, 5, 8, 7, 6, 8);
positives = the anchor with 3 of its tokens replaced (a paraphrase), negatives = the anchor with 4
tokens replaced (hard negatives; same lengths); the same batch every step.
Loss: F.triplet_margin_loss(a, p, n, margin=1.0, p=2, epsilon=1e-6) (mean of
clip(||a - p + eps|| - ||a - n + eps|| + margin, min=0)).

Optimizer: AdamW(beta1 0.9, beta2 0.999, epsilon 1e-8, weight_decay 0.1) with decay on the
matrices only (word_emb, fc1, fc2 weights: apply_decay_param_fun over the .name of parameters of
ndim >= 2), learning rate LinearWarmup(learning_rate=PolynomialDecay(3e-3, decay_steps=6,
end_lr=0, power=1), warmup_steps=2, start_lr=0, end_lr=3e-3): linear warm-up over 2 steps, then
linear decay to 0 at step 8 (the schedule of a longer run, 4 steps of it run here): lr 0, 1.5e-3,
3e-3, 2.5e-3 for updates 1..4 (update 1 has lr 0, as in HF's get_linear_schedule_with_warmup).
optimizer() returns (optimizer, scheduler). No gradient clipping.
Weights: person A's init (paddle.seed(0)): word_emb N(0, 1), fc1/fc2 weights N(0, 0.2), biases
(fc1, LayerNorm) N(0, 0.1), LayerNorm scale 1 + N(0, 0.1). fc2 has no bias: the triplet loss is
translation invariant, so its gradient would be exactly zero and Adam would turn rounding noise
into +-lr steps.

PADIFF_BUG (this side only):
  paddle_ln_decay        -> apply_decay_param_fun = lambda name: "b_0" not in name ("decay everything
                            but the biases", on paddle's parameter names linear_0.w_0 / linear_0.b_0):
                            the LayerNorm scale (layer_norm_0.w_0) is decayed as well (first shows
                            after update 2: update 1 has lr 0)
  paddle_warmup_last_epoch -> LinearWarmup(..., last_epoch=0) ("start at step 0"): paddle's
                            constructor already steps once, so the schedule starts one step late:
                            lr 1.5e-3, 3e-3, 2.5e-3, 2e-3 instead of 0, 1.5e-3, 3e-3, 2.5e-3
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_ln_decay", "paddle_warmup_last_epoch"} | {"margin_sign"}  # the torch side's, ignored here
VOCAB, EMB, HID, OUT, SEQ, BATCH = 64, 32, 48, 24, 8, 8
LENGTHS = (8, 6, 7, 5, 8, 7, 6, 8)
P_DROP, MARGIN = 0.1, 1.0
LR, WD, WARMUP, TOTAL = 3e-3, 0.1, 2, 8


def _batch():
    rng = np.random.default_rng(37)
    anchor = np.zeros((BATCH, SEQ), "int64")
    for b, n in enumerate(LENGTHS):
        anchor[b, :n] = rng.integers(1, VOCAB, n)
    positive, negative = anchor.copy(), anchor.copy()
    for b, n in enumerate(LENGTHS):  # paraphrase: 3 tokens replaced; hard negative: 4 tokens replaced
        positive[b, rng.choice(n, 3, replace=False)] = rng.integers(1, VOCAB, 3)
        negative[b, rng.choice(n, 4, replace=False)] = rng.integers(1, VOCAB, 4)
    return anchor, positive, negative


ANCHOR, POSITIVE, NEGATIVE = _batch()


class TextEncoder(nn.Layer):
    def __init__(self, vocab_size, emb_dim, hidden, out_dim, dropout):
        super().__init__()
        self.fc1 = nn.Linear(emb_dim, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.drop = nn.Dropout(dropout)
        self.fc2 = nn.Linear(hidden, out_dim, bias_attr=False)
        self.word_emb = nn.Embedding(vocab_size, emb_dim)

    def forward(self, ids):
        x = self.word_emb(ids)
        mask = (ids != 0).astype(x.dtype).unsqueeze(-1)
        pooled = (x * mask).sum(axis=1) / mask.sum(axis=1)
        return self.fc2(self.drop(F.gelu(self.norm(self.fc1(pooled)))))


class SiameseNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.encoder = TextEncoder(VOCAB, EMB, HID, OUT, P_DROP)

    def forward(self, anchor, positive, negative):
        return self.encoder(anchor), self.encoder(positive), self.encoder(negative)


def _init(m):
    paddle.seed(0)
    for name, p in m.named_parameters():
        if name.endswith("word_emb.weight"):
            v = paddle.normal(0.0, 1.0, p.shape)
        elif p.ndim >= 2:
            v = paddle.normal(0.0, 0.2, p.shape)
        elif name.endswith("bias"):
            v = paddle.normal(0.0, 0.1, p.shape)
        else:  # LayerNorm scale
            v = 1.0 + paddle.normal(0.0, 0.1, p.shape)
        p.set_value(v.astype(p.dtype))


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = SiameseNet()
    _init(m)
    m.train()
    return m


def inputs():
    return (paddle.to_tensor(ANCHOR), paddle.to_tensor(POSITIVE), paddle.to_tensor(NEGATIVE)), {}


def loss(output):
    emb_a, emb_p, emb_n = output
    return F.triplet_margin_loss(emb_a, emb_p, emb_n, margin=MARGIN, p=2, epsilon=1e-6)


def optimizer(model):
    b = bug(BUGS)
    decay = {p.name for p in model.parameters() if p.ndim >= 2}
    if b == "paddle_ln_decay":
        decay_fn = lambda name: "b_0" not in name  # noqa: E731 - "decay everything but the biases"
    else:
        decay_fn = lambda name: name in decay  # noqa: E731
    sched = paddle.optimizer.lr.LinearWarmup(
        learning_rate=paddle.optimizer.lr.PolynomialDecay(LR, decay_steps=TOTAL - WARMUP, end_lr=0.0, power=1.0),
        warmup_steps=WARMUP, start_lr=0.0, end_lr=LR,
        last_epoch=0 if b == "paddle_warmup_last_epoch" else -1)
    opt = paddle.optimizer.AdamW(learning_rate=sched, beta1=0.9, beta2=0.999, epsilon=1e-8,
                                 parameters=model.parameters(), weight_decay=WD, apply_decay_param_fun=decay_fn)
    return opt, sched
