"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a small pre-LN
transformer text classifier fine-tuned 3 steps with AdamW over two parameter groups (backbone,
head with its own learning rate), no weight decay on biases and LayerNorm weights, a linear
warm-up then linear decay schedule stepped every step, label-smoothing cross-entropy.

    TinyTransformerClassifier: registers embeddings (Embeddings: word_embeddings, position_embeddings
        (nn.Embedding [12, 32]), dropout), encoder (LayerList of 2 EncoderLayer), final_norm, pooler
        (Pooler: dense + paddle.tanh), classifier (ClassifierHead: dropout, out)
    EncoderLayer (pre-LN): norm1, attn (SelfAttention: q_proj, k_proj, v_proj, attn_drop (nn.Dropout
        on the attention probabilities), out_proj), dropout1, norm2, ffn (FeedForward: fc1, F.gelu
        (erf), fc2), dropout2
    forward(input_ids [B, L], attn_mask [B, L] (1 = token, 0 = padding)) -> logits [B, 5] from the
        first ([CLS]) position; padding masked with an additive -1e4 on the attention scores

Dropout: hidden 0.2 (embeddings, both residual branches, classifier), attention probabilities 0.1.
Data: inputs(step): 8 sequences of length 10 from default_rng(7200 + step): [CLS] = 1, tokens in
4..39, lengths 6..10, padding id 0 after the length; labels in 0..4 (kept by the spec for loss()).
Loss: F.cross_entropy(logits, labels, label_smoothing=0.1) (paddle's built-in).
Optimizer: AdamW(beta1 0.9, beta2 0.999, epsilon 1e-8, weight_decay 0.05) over two parameter group
dicts: the backbone (embeddings, encoder, final_norm) and the head (pooler + classifier) with
'learning_rate': 5.0 - in paddle a group's 'learning_rate' SCALES the optimizer's (scheduled)
learning rate: head lr = 5 x backbone lr. Decay only where apply_decay_param_fun(p.name) is true:
the set of p.name (paddle's unique names, "linear_3.w_0") of every parameter whose structured name
is neither a bias nor a LayerNorm weight (so: Linear weights and the two embedding tables).
Schedule: LinearWarmup(PolynomialDecay(1e-3, decay_steps=4, end_lr=0, power=1), warmup_steps=1,
start_lr=2.5e-4, end_lr=1e-3): backbone lr 2.5e-4, 1e-3, 7.5e-4 for updates 1..3 (head x5);
optimizer() returns (optimizer, scheduler), the scheduler stepped after each update.
Init (person A, "a fine-tuned checkpoint"): paddle.seed(72); matrices N(0, 0.15), biases
N(0, 0.05), LayerNorm weights 1 + N(0, 0.1).

PADIFF_BUG (this side only):
  paddle_attn_p_slip -> EncoderLayer passes its residual `dropout` (0.2) instead of `attn_dropout`
              (0.1) to SelfAttention: the attention probabilities are dropped with p 0.2
  paddle_head_lr_abs -> the head group written with the torch-style ABSOLUTE learning rate,
              {'learning_rate': 5e-3}: paddle multiplies it with the scheduled rate, so the head
              trains with 5e-3 x 1e-3 = 5e-6 (x warm-up) instead of 5e-3
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_attn_p_slip", "paddle_head_lr_abs"} | {"torch_smooth_k_minus_1"}  # the torch side's, ignored here

VOCAB, MAX_POS, D_MODEL, N_HEADS, D_FF, N_LAYERS, N_CLS = 40, 12, 32, 4, 64, 2, 5
BATCH, SEQ = 8, 10
HIDDEN_DROPOUT, ATTN_DROPOUT = 0.2, 0.1
BASE_LR, HEAD_LR_SCALE, WD, SMOOTH = 1e-3, 5.0, 0.05, 0.1
WARMUP, TOTAL, WARMUP_START = 1, 5, 2.5e-4

_BATCH = {}


def make_batch(step):
    """numpy: ids [8, 10] ([CLS] 1, tokens 4..39, 0-padding), mask [8, 10], labels [8]."""
    rng = np.random.default_rng(7200 + step)
    ids = rng.integers(4, VOCAB, (BATCH, SEQ)).astype("int64")
    lengths = rng.integers(6, SEQ + 1, BATCH)
    mask = (np.arange(SEQ)[None, :] < lengths[:, None]).astype("int64")
    ids = ids * mask
    ids[:, 0] = 1
    labels = rng.integers(0, N_CLS, BATCH).astype("int64")
    return ids, mask, labels


class Embeddings(nn.Layer):
    def __init__(self):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB, D_MODEL)
        self.position_embeddings = nn.Embedding(MAX_POS, D_MODEL)
        self.dropout = nn.Dropout(HIDDEN_DROPOUT)

    def forward(self, input_ids):
        pos = paddle.arange(input_ids.shape[1], dtype="int64").unsqueeze(0)
        return self.dropout(self.word_embeddings(input_ids) + self.position_embeddings(pos))


class SelfAttention(nn.Layer):
    def __init__(self, d_model, n_heads, dropout):
        super().__init__()
        self.n_heads, self.head_dim = n_heads, d_model // n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.attn_drop = nn.Dropout(dropout)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, x, bias):
        b, s, d = x.shape
        def split(t):
            return t.reshape([b, s, self.n_heads, self.head_dim]).transpose([0, 2, 1, 3])

        q, k, v = split(self.q_proj(x)), split(self.k_proj(x)), split(self.v_proj(x))
        scores = paddle.matmul(q, k, transpose_y=True) * (self.head_dim ** -0.5) + bias
        probs = self.attn_drop(F.softmax(scores, axis=-1))
        ctx = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([b, s, d])
        return self.out_proj(ctx)


class FeedForward(nn.Layer):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class EncoderLayer(nn.Layer):
    def __init__(self, d_model, n_heads, d_ff, dropout, attn_dropout):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model, epsilon=1e-5)
        p_attn = dropout if bug(BUGS) == "paddle_attn_p_slip" else attn_dropout
        self.attn = SelfAttention(d_model, n_heads, p_attn)
        self.dropout1 = nn.Dropout(dropout)
        self.norm2 = nn.LayerNorm(d_model, epsilon=1e-5)
        self.ffn = FeedForward(d_model, d_ff)
        self.dropout2 = nn.Dropout(dropout)

    def forward(self, x, bias):
        x = x + self.dropout1(self.attn(self.norm1(x), bias))
        return x + self.dropout2(self.ffn(self.norm2(x)))


class Pooler(nn.Layer):
    def __init__(self, d_model):
        super().__init__()
        self.dense = nn.Linear(d_model, d_model)

    def forward(self, h):
        return paddle.tanh(self.dense(h[:, 0]))


class ClassifierHead(nn.Layer):
    def __init__(self, d_model, n_cls, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(d_model, n_cls)

    def forward(self, pooled):
        return self.out(self.dropout(pooled))


class TinyTransformerClassifier(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embeddings = Embeddings()
        self.encoder = nn.LayerList([EncoderLayer(D_MODEL, N_HEADS, D_FF, HIDDEN_DROPOUT, ATTN_DROPOUT)
                                     for _ in range(N_LAYERS)])
        self.final_norm = nn.LayerNorm(D_MODEL, epsilon=1e-5)
        self.pooler = Pooler(D_MODEL)
        self.classifier = ClassifierHead(D_MODEL, N_CLS, HIDDEN_DROPOUT)

    def forward(self, input_ids, attn_mask):
        bias = (1.0 - attn_mask.astype(self.final_norm.weight.dtype)).unsqueeze([1, 2]) * -1e4
        h = self.embeddings(input_ids)
        for layer in self.encoder:
            h = layer(h, bias)
        return self.classifier(self.pooler(self.final_norm(h)))


def _checkpoint_like(m):
    """Person A's stand-in for a fine-tuned checkpoint: every tensor non-trivial."""
    paddle.seed(72)
    for name, p in m.named_parameters():
        if p.ndim >= 2:
            v = paddle.normal(0.0, 0.15, p.shape)
        elif name.endswith("bias"):
            v = paddle.normal(0.0, 0.05, p.shape)
        else:  # LayerNorm weights
            v = 1.0 + paddle.normal(0.0, 0.1, p.shape)
        p.set_value(v.astype(p.dtype))


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = TinyTransformerClassifier()
    _checkpoint_like(m)
    m.train()
    return m


def inputs(step=0):
    ids, mask, labels = make_batch(step)
    _BATCH["labels"] = labels
    return (paddle.to_tensor(ids), paddle.to_tensor(mask)), {}


def loss(output):
    return F.cross_entropy(output, paddle.to_tensor(_BATCH["labels"]), label_smoothing=SMOOTH)


def optimizer(model):
    b = bug(BUGS)
    head = list(model.pooler.parameters()) + list(model.classifier.parameters())
    head_ids = {id(p) for p in head}
    backbone = [p for p in model.parameters() if id(p) not in head_ids]
    # apply_decay_param_fun is called with p.name (the unique name, "linear_3.b_0"), not the
    # structured name: build the set of names to decay from the structured names first
    decay = {p.name for n, p in model.named_parameters()
             if not (n.endswith(".bias") or "norm" in n)}
    head_lr = 5e-3 if b == "paddle_head_lr_abs" else HEAD_LR_SCALE
    sched = paddle.optimizer.lr.LinearWarmup(
        learning_rate=paddle.optimizer.lr.PolynomialDecay(BASE_LR, decay_steps=TOTAL - WARMUP, end_lr=0.0, power=1.0),
        warmup_steps=WARMUP, start_lr=WARMUP_START, end_lr=BASE_LR)
    opt = paddle.optimizer.AdamW(
        learning_rate=sched, beta1=0.9, beta2=0.999, epsilon=1e-8, weight_decay=WD,
        parameters=[{"params": backbone}, {"params": head, "learning_rate": head_lr}],
        apply_decay_param_fun=lambda name: name in decay)
    return opt, sched
