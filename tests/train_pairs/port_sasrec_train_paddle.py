"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a tiny SASRec
(self-attentive sequential recommendation, Kang & McAuley 2018), 3 training steps, a new batch
of user histories each step.

    SASRec: registers item_emb (Embedding 51 x 16, padding_idx 0), pos_emb (Embedding 8 x 16,
        learned positions), emb_dropout (Dropout 0.2), blocks (LayerList of 2 SASRecBlock),
        last_norm (LayerNorm 16, eps 1e-8)
    SASRecBlock: attn_norm (LayerNorm), attn (nn.MultiHeadAttention(16, 2 heads, dropout 0.2):
        separate q_proj / k_proj / v_proj / out_proj, the attention-probability dropout an inline
        F.dropout), ffn_norm (LayerNorm), conv1 / conv2 (Conv1D 16 -> 16, kernel 1, NCL),
        drop1 / drop2 (Dropout 0.2)
    forward(log_seqs, pos_seqs, neg_seqs) -> (pos_logits [B, L], neg_logits [B, L])

SASRec forward (the reference implementation's order): seqs = item_emb(log_seqs) * sqrt(16) +
pos_emb(0..L-1); emb_dropout; zeroed where log_seqs == 0 (the "timeline mask"); per block:
Q = attn_norm(seqs); seqs = Q + attn(Q, seqs, seqs, causal mask) (queries normalised, keys and
values not); seqs = ffn_norm(seqs); seqs = seqs + drop2(conv2(relu(drop1(conv1(seqs^T)))))^T;
timeline mask again; feats = last_norm(seqs); logits = sum(feats * item_emb(item), -1) for the
positive and the negative item of every position.
The causal mask is paddle's bool convention: True = may attend (tril), nn.MultiHeadAttention
turns False into -1e9.
Data: inputs(step), numpy default_rng(5600 + step): 4 users, history lengths 3..8 left-padded
with 0 to L = 8, item ids 1..50 without repeats per user; pos_seqs = the next item of every
position, neg_seqs = one sampled item per position that the user never touched (0 at padding):
the negatives are fixed by inputs(step), no sampling in the model.
Loss: binary cross-entropy with logits, positives labelled 1 and negatives 0, on the positions
with pos != 0 only: (bce(pos) + bce(neg)) * mask summed / mask.sum().
Optimizer: paddle.optimizer.NAdam(learning_rate 1e-3, beta1 0.9, beta2 0.98, epsilon 1e-8,
momentum_decay 4e-3), no weight decay, no clipping.
Init: paddle.seed(0); item_emb N(0, 0.1) with the padding row 0 zero, pos_emb N(0, 0.1), paddle's
default Linear/Conv1D weights, every bias N(0, 0.05), LayerNorm weight 1 + N(0, 0.1), bias
N(0, 0.1).

PADIFF_BUG (this side only):
  paddle_mha_no_dropout -> nn.MultiHeadAttention(16, 2) without dropout=0.2 (paddle's default
              is 0.0; the reference drops 20 % of the attention probabilities)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_mha_no_dropout"} | {"bce_no_pad_mask", "adam_not_nadam"}  # the torch side's, ignored here
N_ITEMS, MAXLEN, D, HEADS, N_BLOCKS, N_USERS, P_DROP = 50, 8, 16, 2, 2, 4, 0.2
LR, BETA1, BETA2, EPS = 1e-3, 0.9, 0.98, 1e-8

_TARGETS = {}


def histories(step):
    """log_seqs, pos_seqs, neg_seqs [4, 8] int64 (numpy, the same numbers on both sides)."""
    rng = np.random.default_rng(5600 + step)
    log_seqs = np.zeros((N_USERS, MAXLEN), "int64")
    pos_seqs, neg_seqs = log_seqs.copy(), log_seqs.copy()
    for u in range(N_USERS):
        n = int(rng.integers(3, MAXLEN + 1))
        items = rng.choice(np.arange(1, N_ITEMS + 1), n + 1, replace=False)
        unseen = np.setdiff1d(np.arange(1, N_ITEMS + 1), items)
        log_seqs[u, MAXLEN - n:] = items[:-1]
        pos_seqs[u, MAXLEN - n:] = items[1:]
        neg_seqs[u, MAXLEN - n:] = rng.choice(unseen, n)
    return log_seqs, pos_seqs, neg_seqs


class SASRecBlock(nn.Layer):
    def __init__(self, attn_dropout):
        super().__init__()
        self.attn_norm = nn.LayerNorm(D, epsilon=1e-8)
        self.attn = nn.MultiHeadAttention(D, HEADS, dropout=attn_dropout) if attn_dropout else nn.MultiHeadAttention(D, HEADS)
        self.ffn_norm = nn.LayerNorm(D, epsilon=1e-8)
        self.conv1 = nn.Conv1D(D, D, 1)
        self.drop1 = nn.Dropout(P_DROP)
        self.conv2 = nn.Conv1D(D, D, 1)
        self.drop2 = nn.Dropout(P_DROP)

    def forward(self, seqs, causal, keep):
        q = self.attn_norm(seqs)
        seqs = q + self.attn(q, seqs, seqs, attn_mask=causal)
        seqs = self.ffn_norm(seqs)
        y = paddle.transpose(seqs, [0, 2, 1])
        y = self.drop2(self.conv2(F.relu(self.drop1(self.conv1(y)))))
        seqs = seqs + paddle.transpose(y, [0, 2, 1])
        return seqs * keep


class SASRec(nn.Layer):
    def __init__(self):
        super().__init__()
        attn_dropout = 0.0 if bug(BUGS) == "paddle_mha_no_dropout" else P_DROP
        self.item_emb = nn.Embedding(N_ITEMS + 1, D, padding_idx=0)
        self.pos_emb = nn.Embedding(MAXLEN, D)
        self.emb_dropout = nn.Dropout(P_DROP)
        self.blocks = nn.LayerList([SASRecBlock(attn_dropout) for _ in range(N_BLOCKS)])
        self.last_norm = nn.LayerNorm(D, epsilon=1e-8)

    def log2feats(self, log_seqs):
        seqs = self.item_emb(log_seqs) * (D ** 0.5)
        seqs = seqs + self.pos_emb(paddle.arange(MAXLEN)).unsqueeze(0)
        seqs = self.emb_dropout(seqs)
        keep = (log_seqs != 0).astype(seqs.dtype).unsqueeze(-1)
        seqs = seqs * keep
        causal = paddle.tril(paddle.ones([MAXLEN, MAXLEN])).astype("bool")
        for blk in self.blocks:
            seqs = blk(seqs, causal, keep)
        return self.last_norm(seqs)

    def forward(self, log_seqs, pos_seqs, neg_seqs):
        feats = self.log2feats(log_seqs)
        pos_logits = (feats * self.item_emb(pos_seqs)).sum(axis=-1)
        neg_logits = (feats * self.item_emb(neg_seqs)).sum(axis=-1)
        return pos_logits, neg_logits


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = SASRec()
    for name, p in m.named_parameters():
        if name == "item_emb.weight":
            w = paddle.normal(0.0, 0.1, p.shape)
            w[0] = 0.0  # the padding row
            p.set_value(w)
        elif name == "pos_emb.weight":
            p.set_value(paddle.normal(0.0, 0.1, p.shape))
        elif "norm" in name:
            p.set_value(1.0 + paddle.normal(0.0, 0.1, p.shape) if name.endswith("weight") else paddle.normal(0.0, 0.1, p.shape))
        elif name.endswith("bias"):
            p.set_value(paddle.normal(0.0, 0.05, p.shape))
    m.train()
    return m


def inputs(step=0):
    log_seqs, pos_seqs, neg_seqs = histories(step)
    _TARGETS["mask"] = pos_seqs != 0
    return (paddle.to_tensor(log_seqs), paddle.to_tensor(pos_seqs), paddle.to_tensor(neg_seqs)), {}


def loss(output):
    pos_logits, neg_logits = output
    mask = paddle.to_tensor(_TARGETS["mask"]).astype(pos_logits.dtype)
    pos_loss = F.binary_cross_entropy_with_logits(pos_logits, paddle.ones_like(pos_logits), reduction="none")
    neg_loss = F.binary_cross_entropy_with_logits(neg_logits, paddle.zeros_like(neg_logits), reduction="none")
    return ((pos_loss + neg_loss) * mask).sum() / mask.sum()


def optimizer(model):
    return paddle.optimizer.NAdam(learning_rate=LR, beta1=BETA1, beta2=BETA2, epsilon=EPS, momentum_decay=4e-3,
                                  parameters=[p for p in model.parameters() if not p.stop_gradient])
