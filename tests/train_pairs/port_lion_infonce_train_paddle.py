"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a two-tower
(query / document) retrieval encoder trained with a symmetric in-batch InfoNCE loss and a learnable
temperature, optimised with Lion written by hand (paddle ships no Lion), 3 steps, a new batch of
query/document pairs every step.

    TwoTowerRetriever: registers query_tower, doc_tower (two BagTower layers), then logit_scale
        (create_parameter [1], the log of the inverse temperature, CLIP style)
    BagTower(ids, mask): embedding (Embedding 64 x 16) -> masked mean over the tokens -> emb_drop
        (Dropout 0.1) -> fc1 (Linear 16 -> 32) -> F.gelu (exact, inline) -> hid_drop (Dropout 0.2)
        -> fc2 (Linear 32 -> 16) -> norm (LayerNorm 16) -> F.normalize (L2, inline)
    forward(q_ids, q_mask, d_ids, d_mask) -> logits [8, 8] = exp(logit_scale) * q @ d^T

Data: inputs(step): 8 (query, document) pairs from default_rng(4400 + step): query ids [8, 6] with
3..6 real tokens, document ids [8, 10] with 5..10 real tokens; a document shares its query's first
3 tokens (the positive is findable); padding id 0, bool masks.
Loss: in-batch negatives, the positives on the diagonal; symmetric InfoNCE
(CE(logits, arange) + CE(logits^T, arange)) / 2.
Optimizer: Lion (Chen et al. 2023) as a paddle.optimizer.Optimizer subclass with its own step():
    c = beta1 * m + (1 - beta1) * g;  p <- p * (1 - lr * wd)  (decoupled, decayed set only);
    p <- p - lr * sign(c);  m <- beta2 * m + (1 - beta2) * g
lr 1e-3, beta1 0.9, beta2 0.99, weight decay 0.1 on the embedding and Linear weights (by
structured name: not biases, not the LayerNorm parameters, not logit_scale). No schedule, no
clipping.
Init (person A): paddle.seed(44); embeddings N(0, 0.5), Linear weights paddle's default (Xavier
uniform), Linear biases N(0, 0.1), LayerNorm weight 1 + N(0, 0.1) and bias N(0, 0.1) (a trained
look), logit_scale 2.9 (temperature 0.055).

PADIFF_BUG (this side only):
  paddle_drop_args_swapped -> the document tower is built with its two dropout probabilities
              passed positionally in the wrong order, BagTower(..., 0.2, 0.1): emb_drop p 0.2,
              hid_drop p 0.1 (the query tower is right)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_drop_args_swapped"} | {"torch_loss_one_way", "torch_lion_no_beta2"}  # torch side's, ignored here
VOCAB, EMB, HIDDEN, OUT = 64, 16, 32, 16
N_PAIRS, Q_LEN, D_LEN, SHARED = 8, 6, 10, 3
EMB_DROPOUT, HIDDEN_DROPOUT = 0.1, 0.2
LR, BETA1, BETA2, WEIGHT_DECAY = 1e-3, 0.9, 0.99, 0.1
LOGIT_SCALE_INIT = 2.9


def make_pairs(step):
    """numpy: (q_ids, q_mask, d_ids, d_mask), the same numbers on both sides."""
    rng = np.random.default_rng(4400 + step)
    q_len = rng.integers(3, Q_LEN + 1, N_PAIRS)
    d_len = rng.integers(5, D_LEN + 1, N_PAIRS)
    q_ids = rng.integers(1, VOCAB, (N_PAIRS, Q_LEN))
    d_ids = rng.integers(1, VOCAB, (N_PAIRS, D_LEN))
    d_ids[:, :SHARED] = q_ids[:, :SHARED]
    q_mask = np.arange(Q_LEN)[None, :] < q_len[:, None]
    d_mask = np.arange(D_LEN)[None, :] < d_len[:, None]
    q_ids = np.where(q_mask, q_ids, 0).astype("int64")
    d_ids = np.where(d_mask, d_ids, 0).astype("int64")
    return q_ids, q_mask, d_ids, d_mask


class BagTower(nn.Layer):
    def __init__(self, vocab, emb_dim, hidden, out_dim, emb_dropout, hidden_dropout):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb_dim)
        self.emb_drop = nn.Dropout(emb_dropout)
        self.fc1 = nn.Linear(emb_dim, hidden)
        self.hid_drop = nn.Dropout(hidden_dropout)
        self.fc2 = nn.Linear(hidden, out_dim)
        self.norm = nn.LayerNorm(out_dim)

    def forward(self, ids, mask):
        tok = self.embedding(ids)
        m = mask.astype(tok.dtype).unsqueeze(-1)
        pooled = (tok * m).sum(axis=1) / m.sum(axis=1)
        h = F.gelu(self.fc1(self.emb_drop(pooled)))
        h = self.norm(self.fc2(self.hid_drop(h)))
        return F.normalize(h, axis=-1)


class TwoTowerRetriever(nn.Layer):
    def __init__(self, swapped=False):
        super().__init__()
        self.query_tower = BagTower(VOCAB, EMB, HIDDEN, OUT, EMB_DROPOUT, HIDDEN_DROPOUT)
        if swapped:
            self.doc_tower = BagTower(VOCAB, EMB, HIDDEN, OUT, HIDDEN_DROPOUT, EMB_DROPOUT)
        else:
            self.doc_tower = BagTower(VOCAB, EMB, HIDDEN, OUT, EMB_DROPOUT, HIDDEN_DROPOUT)
        self.logit_scale = self.create_parameter(
            [1], default_initializer=nn.initializer.Constant(LOGIT_SCALE_INIT))

    def forward(self, q_ids, q_mask, d_ids, d_mask):
        q = self.query_tower(q_ids, q_mask)
        d = self.doc_tower(d_ids, d_mask)
        return paddle.exp(self.logit_scale) * paddle.matmul(q, d, transpose_y=True)


def _trained_look(m):
    paddle.seed(44)
    for name, p in m.named_parameters():
        if name.endswith("embedding.weight"):
            p.set_value(paddle.normal(0.0, 0.5, p.shape))
        elif ".norm." in name and name.endswith("weight"):
            p.set_value(1.0 + paddle.normal(0.0, 0.1, p.shape))
        elif name.endswith("bias"):
            p.set_value(paddle.normal(0.0, 0.1, p.shape))


def model():
    b = bug(BUGS)
    paddle.seed(44)
    m = TwoTowerRetriever(swapped=(b == "paddle_drop_args_swapped"))
    _trained_look(m)
    m.train()
    return m


def inputs(step=0):
    q_ids, q_mask, d_ids, d_mask = make_pairs(step)
    return (paddle.to_tensor(q_ids), paddle.to_tensor(q_mask), paddle.to_tensor(d_ids), paddle.to_tensor(d_mask)), {}


def loss(output):
    logits = output
    labels = paddle.arange(logits.shape[0], dtype="int64")
    return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2


class Lion(paddle.optimizer.Optimizer):
    """Lion by hand: paddle has none. Decoupled weight decay on the parameters whose .name is in
    ``decay_names``."""

    def __init__(self, learning_rate, parameters, beta1=0.9, beta2=0.99, weight_decay=0.0, decay_names=()):
        super().__init__(learning_rate=learning_rate, parameters=parameters)
        self._beta1, self._beta2, self._wd = beta1, beta2, weight_decay
        self._decay_names = set(decay_names)
        self._moments = {}

    @paddle.no_grad()
    def step(self):
        lr = self.get_lr()
        for p in self._parameter_list:
            if p.stop_gradient or p.grad is None:
                continue
            g = p.grad
            m = self._moments.get(p.name)
            if m is None:
                m = paddle.zeros_like(p)
            c = self._beta1 * m + (1.0 - self._beta1) * g
            if p.name in self._decay_names:
                p.scale_(1.0 - lr * self._wd)
            p.subtract_(lr * paddle.sign(c))
            self._moments[p.name] = self._beta2 * m + (1.0 - self._beta2) * g


def optimizer(model):
    decay = [p.name for n, p in model.named_parameters()
             if n.endswith("weight") and ".norm." not in n]
    params = [p for p in model.parameters() if not p.stop_gradient]
    return Lion(LR, params, beta1=BETA1, beta2=BETA2, weight_decay=WEIGHT_DECAY, decay_names=decay)
