"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a two-tower (dual
encoder) retrieval ranker trained 3 steps on (query, positive document, negative document)
triples with a margin ranking loss.

    TwoTowerRanker: registers tower (Tower), shared by queries and documents; forward(query, pos,
        neg) calls tower(query), tower(pos), tower(neg) in that order and scores (query, pos) and
        (query, neg) by cosine similarity, written out: F.normalize each side, then the row sum
        of the product -> (pos_score [8], neg_score [8])
    Tower: registers embed (Embedding 60 x 16, padding_idx 0), fc1 (Linear 16 -> 32), norm
        (LayerNorm 32), drop (Dropout 0.1), fc2 (Linear 32 -> 16); masked mean over the non-pad
        tokens (sum(emb * mask) / count), fc1, norm, ReLU (functional), drop, fc2

Data: inputs(step): default_rng(5100 + step): 8 triples; queries of 3-6 tokens (pad 0 to 6),
documents of 5-10 tokens (pad 0 to 10); a positive shares about a third of its tokens with its
query, a negative is drawn from the vocabulary; 3 id tensors int64.
Loss: F.margin_ranking_loss(pos_score, neg_score, label=ones, margin=0.3) = mean of
max(0, 0.3 - (pos - neg)).
Optimizer: SGD with momentum 0.9 and dampening 0.1 in torch's convention (the reference
numbers came from torch): paddle.optimizer.Momentum has no dampening (v = mu v + g), so person A
subclassed paddle.optimizer.SGD: buf = g at the first step, then buf = 0.9 buf + (1 - 0.1) g;
p -= lr buf. No weight decay.
Schedule: paddle.optimizer.lr.StepDecay(0.5, step_size=1, gamma=0.5), stepped after every update:
lr 0.5, 0.25, 0.125 for updates 1..3; optimizer() returns (optimizer, scheduler).
Init: paddle.seed(0); embedding N(0, 0.5) (the pad row zero), paddle's default Linear weights,
Linear biases N(0, 0.1), LayerNorm weight 1 + N(0, 0.1), bias N(0, 0.1).

PADIFF_BUG (this side only):
  paddle_damp_first -> the hand-written momentum dampens the first step too: buf = (1 - 0.1) g
              at step 1 (torch starts the buffer at g, undampened)
  paddle_keep_prob  -> the tower's Dropout built from the reference config's keep probability
              (0.9) as if it were the drop probability: p 0.9 instead of 0.1
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_damp_first", "paddle_keep_prob"} | {"torch_margin_default"}  # the torch side's, ignored here
VOCAB, EMB, HID, OUT = 60, 16, 32, 16
N_TRIPLES, Q_LEN, D_LEN = 8, 6, 10
CFG = {"keep_prob": 0.9, "margin": 0.3}
LR, MOMENTUM, DAMPENING, GAMMA = 0.5, 0.9, 0.1, 0.5


def triples(step):
    """numpy int64: queries [8, 6], positive documents [8, 10], negative documents [8, 10]; 0 = pad."""
    rng = np.random.default_rng(5100 + step)
    q = np.zeros((N_TRIPLES, Q_LEN), "int64")
    pos = np.zeros((N_TRIPLES, D_LEN), "int64")
    neg = np.zeros((N_TRIPLES, D_LEN), "int64")
    for i in range(N_TRIPLES):
        nq, npos, nneg = rng.integers(3, Q_LEN + 1), rng.integers(5, D_LEN + 1), rng.integers(5, D_LEN + 1)
        q[i, :nq] = rng.integers(1, VOCAB, nq)
        shared = rng.choice(q[i, :nq], npos // 3)
        pos[i, :npos] = rng.permutation(np.concatenate([shared, rng.integers(1, VOCAB, npos - npos // 3)]))
        neg[i, :nneg] = rng.integers(1, VOCAB, nneg)
    return q, pos, neg


class Tower(nn.Layer):
    def __init__(self, drop_p):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMB, padding_idx=0)
        self.fc1 = nn.Linear(EMB, HID)
        self.norm = nn.LayerNorm(HID)
        self.drop = nn.Dropout(drop_p)
        self.fc2 = nn.Linear(HID, OUT)

    def forward(self, ids):
        mask = (ids != 0).astype(self.embed.weight.dtype).unsqueeze(-1)
        pooled = (self.embed(ids) * mask).sum(axis=1) / mask.sum(axis=1)
        h = self.drop(F.relu(self.norm(self.fc1(pooled))))
        return self.fc2(h)


class TwoTowerRanker(nn.Layer):
    def __init__(self, drop_p):
        super().__init__()
        self.tower = Tower(drop_p)

    def forward(self, query, pos, neg):
        q = F.normalize(self.tower(query), axis=-1)
        d_pos = F.normalize(self.tower(pos), axis=-1)
        d_neg = F.normalize(self.tower(neg), axis=-1)
        return (q * d_pos).sum(axis=-1), (q * d_neg).sum(axis=-1)


def model():
    b = bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    # the reference config gives the keep probability (TF style); 1 - 0.9 rounded: 0.09999999999999998
    # would be a different p from torch's 0.1
    m = TwoTowerRanker(CFG["keep_prob"] if b == "paddle_keep_prob" else round(1.0 - CFG["keep_prob"], 6))
    t = m.tower
    emb = paddle.normal(0.0, 0.5, t.embed.weight.shape)
    emb[0] = 0.0
    t.embed.weight.set_value(emb)
    for fc in (t.fc1, t.fc2):
        fc.bias.set_value(paddle.normal(0.0, 0.1, fc.bias.shape))
    t.norm.weight.set_value(1.0 + paddle.normal(0.0, 0.1, t.norm.weight.shape))
    t.norm.bias.set_value(paddle.normal(0.0, 0.1, t.norm.bias.shape))
    m.train()
    return m


def inputs(step=0):
    return tuple(paddle.to_tensor(a) for a in triples(step)), {}


def loss(output):
    pos_score, neg_score = output
    label = paddle.ones_like(pos_score)
    return F.margin_ranking_loss(pos_score, neg_score, label, margin=CFG["margin"])


class DampenedMomentumSGD(paddle.optimizer.SGD):
    """torch.optim.SGD(momentum, dampening): buf = g first, then buf = mu buf + (1 - d) g; p -= lr buf."""

    def __init__(self, learning_rate, parameters, momentum, dampening, damp_first=False):
        super().__init__(learning_rate=learning_rate, parameters=parameters)
        self._mu, self._damp, self._damp_first = momentum, dampening, damp_first
        self._buf = {}

    @paddle.no_grad()
    def step(self):
        lr = self.get_lr()
        for p in self._parameter_list:
            if p.stop_gradient or p.grad is None:
                continue
            g = p.grad
            buf = self._buf.get(p.name)
            if buf is None:
                buf = (1.0 - self._damp) * g if self._damp_first else g.clone()
            else:
                buf = self._mu * buf + (1.0 - self._damp) * g
            self._buf[p.name] = buf
            p.set_value(p - lr * buf)


def optimizer(model):
    sched = paddle.optimizer.lr.StepDecay(learning_rate=LR, step_size=1, gamma=GAMMA)
    opt = DampenedMomentumSGD(sched, model.parameters(), MOMENTUM, DAMPENING,
                              damp_first=bug(BUGS) == "paddle_damp_first")
    return opt, sched
