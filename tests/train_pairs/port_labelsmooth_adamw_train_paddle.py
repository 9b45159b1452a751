"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a tiny
transformer-encoder text classifier trained with label-smoothed cross entropy and AdamW with
parameter groups (no decay on biases and norm scales) under a linear warm-up, 3 steps.

    TextClassifier: registers word_emb (Embedding 40 x 16), pos_emb (Embedding 16 x 16),
        emb_dropout (Dropout 0.1), encoder (paddle.nn.TransformerEncoderLayer(16, 2, 32,
        dropout=0.1, activation="gelu"): post-norm; self_attn with separate q/k/v/out_proj and
        an inline F.dropout on the attention probabilities, dropout1, linear1, gelu, the
        act dropout `dropout` (act_dropout=None: the value of `dropout`), linear2, dropout2,
        norm1, norm2), dropout (Dropout 0.1), classifier (Linear 16 -> 4)
    forward(input_ids [B, S], attention_mask [B, S] int64 1 = token) -> logits [B, 4]
        word_emb(ids) + pos_emb(arange(S)) -> emb_dropout -> encoder(h, mask [B, 1, 1, S] bool)
        -> masked mean over the tokens -> dropout -> classifier

Data: inputs(step): batch 4 x 8 tokens from default_rng(7810 + step): ids in 1..39, lengths
4..8 (padding id 0 after the length, attention_mask 0 there), labels in 0..3 (kept for loss()).
Loss: label-smoothed cross entropy (eps 0.1) written by hand (person A, the Inception-v3 form):
    (1 - eps) * nll(y) + eps * mean_k(-log p_k), averaged over the batch.
Optimizer: AdamW(beta1 0.9, beta2 0.999, epsilon 1e-8, weight_decay 0.01,
apply_decay_param_fun: the parameter names (`p.name`, e.g. "linear_0.w_0") of the tensors with
ndim >= 2) under LinearWarmup(learning_rate 1e-3, warmup_steps 3, start_lr 2.5e-4, end_lr 1e-3):
lr 2.5e-4, 5e-4, 7.5e-4 for updates 1..3 (peak * (k / 4) for update k).
Init (person A): paddle.seed(7800); matrices and embeddings N(0, 0.2) (position N(0, 0.1)),
Linear biases N(0, 0.05), LayerNorm weight 1 + N(0, 0.1), bias N(0, 0.1).

PADIFF_BUG (this side only):
  paddle_smooth_others -> the hand-written smoothing spreads eps over the K - 1 WRONG classes
              (target 1 - eps on the label, eps / (K - 1) elsewhere) instead of eps / K over
              all K classes (what torch's label_smoothing=0.1 does)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_smooth_others"} | {"torch_act_dropout_none", "torch_nodecay_names"}  # torch side's, ignored here
VOCAB, MAX_LEN, D_MODEL, N_HEAD, D_FF, N_CLASS = 40, 16, 16, 2, 32, 4
BATCH, SEQ = 4, 8
DROPOUT, EPS_LS = 0.1, 0.1
PEAK_LR, WARMUP, WD = 1e-3, 4, 0.01

_BATCH = {}


def make_batch(step):
    rng = np.random.default_rng(7810 + step)
    ids = rng.integers(1, VOCAB, (BATCH, SEQ)).astype("int64")
    lengths = rng.integers(4, SEQ + 1, BATCH)
    mask = (np.arange(SEQ)[None, :] < lengths[:, None]).astype("int64")
    ids = ids * mask  # padding id 0
    labels = rng.integers(0, N_CLASS, BATCH).astype("int64")
    return ids, mask, labels


class TextClassifier(nn.Layer):
    def __init__(self):
        super().__init__()
        self.word_emb = nn.Embedding(VOCAB, D_MODEL)
        self.pos_emb = nn.Embedding(MAX_LEN, D_MODEL)
        self.emb_dropout = nn.Dropout(DROPOUT)
        self.encoder = nn.TransformerEncoderLayer(D_MODEL, N_HEAD, D_FF, dropout=DROPOUT, activation="gelu")
        self.dropout = nn.Dropout(DROPOUT)
        self.classifier = nn.Linear(D_MODEL, N_CLASS)

    def forward(self, input_ids, attention_mask):
        seq = input_ids.shape[1]
        pos = paddle.arange(seq, dtype="int64")
        h = self.word_emb(input_ids) + self.pos_emb(pos).unsqueeze(0)
        h = self.emb_dropout(h)
        keep = attention_mask.astype("bool").unsqueeze([1, 2])  # [B, 1, 1, S], True = attend
        h = self.encoder(h, src_mask=keep)
        m = attention_mask.astype(h.dtype).unsqueeze(-1)
        pooled = (h * m).sum(axis=1) / m.sum(axis=1)
        return self.classifier(self.dropout(pooled))


def _init(m):
    paddle.seed(7800)
    for name, p in m.named_parameters():
        if "emb" in name:
            v = paddle.normal(0.0, 0.1 if name.startswith("pos_emb") else 0.2, p.shape)
        elif p.ndim >= 2:
            v = paddle.normal(0.0, 0.2, p.shape)
        elif "norm" in name and name.endswith("weight"):
            v = 1.0 + paddle.normal(0.0, 0.1, p.shape)
        elif "norm" in name:
            v = paddle.normal(0.0, 0.1, p.shape)
        else:
            v = paddle.normal(0.0, 0.05, p.shape)
        p.set_value(v.astype(p.dtype))


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(7800)
    m = TextClassifier()
    _init(m)
    m.train()
    return m


def inputs(step=0):
    ids, mask, labels = make_batch(step)
    _BATCH["labels"] = labels
    return (paddle.to_tensor(ids), paddle.to_tensor(mask)), {}


def loss(output):
    logits = output
    y = paddle.to_tensor(_BATCH["labels"])
    logp = F.log_softmax(logits, axis=-1)
    nll = -paddle.take_along_axis(logp, y.unsqueeze(-1), axis=-1).squeeze(-1)
    if bug(BUGS) == "paddle_smooth_others":
        k = logits.shape[-1]
        others = (-logp).sum(axis=-1) - nll
        smooth = others / (k - 1)
    else:
        smooth = (-logp).mean(axis=-1)
    return ((1.0 - EPS_LS) * nll + EPS_LS * smooth).mean()


def optimizer(model):
    params = [p for p in model.parameters() if not p.stop_gradient]
    decay = {p.name for p in params if p.ndim >= 2}
    sched = paddle.optimizer.lr.LinearWarmup(learning_rate=PEAK_LR, warmup_steps=WARMUP - 1,
                                             start_lr=PEAK_LR / WARMUP, end_lr=PEAK_LR)
    opt = paddle.optimizer.AdamW(learning_rate=sched, beta1=0.9, beta2=0.999, epsilon=1e-8,
                                 parameters=params, weight_decay=WD,
                                 apply_decay_param_fun=lambda name: name in decay)
    return opt, sched
