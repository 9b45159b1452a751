"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a tiny pre-norm
transformer text classifier trained 4 steps with AdamW, a linear-warmup-then-cosine learning-rate
schedule, weight decay on everything but biases and LayerNorm scales, global-norm clipping and
label smoothing.

    embed = nn.Embedding(64, 32), pos = create_parameter [8, 32] (N(0, 0.02)), emb_drop (0.1)
    block (EncoderBlock): ln1, q_proj, k_proj, v_proj (no bias), out_proj (4 heads of 8), attn_drop (0.1,
        on the attention probabilities), drop1 (0.1), ln2, fc1 (32 -> 64), gelu (exact), fc2,
        drop2 (0.1); registered q/k/v/out and the FFN BEFORE the norms (registration order differs
        from call order)
    final_norm, mean pooling over the 8 tokens, classifier = nn.Linear(32, 4)
Dropout 0.1: 4 calls with p > 0 per forward (emb_drop, attn_drop, drop1, drop2), same order and
shapes as the torch side. model.train().

Data: inputs(step): a new batch each step, ids [8, 8] in 1..63 and labels in 0..3
(default_rng(4610 + step)). Loss: cross-entropy with label smoothing 0.1, written the paddle way:
soft labels F.label_smooth(F.one_hot(labels, 4), epsilon=0.1) and soft_label=True
((1 - 0.1) one-hot + 0.1 / 4, the same targets as torch's label_smoothing=0.1).

Optimizer: paddle.optimizer.AdamW(learning_rate=sched, beta1 0.9, beta2 0.999, epsilon 1e-8,
weight_decay 0.1, apply_decay_param_fun: decay every parameter except biases and LayerNorm
scales (the set is built from the parameters' .name, which is what the function receives),
grad_clip=ClipGradByGlobalNorm(1.0)). Schedule: LinearWarmup(CosineAnnealingDecay(5e-3, T_max=2),
warmup_steps=2, start_lr=5e-4, end_lr=5e-3): lr 5e-4, 2.75e-3, 5e-3, 2.5e-3 for updates 1..4.
optimizer() returns (optimizer, scheduler).
Weights: paddle.seed(0), paddle's default init, LayerNorm scales 1 + N(0, 0.1) and biases
N(0, 0.1) so that every tensor matters.

PADIFF_BUG (this side only):
  paddle_no_smoothing -> plain F.cross_entropy(logits, labels): the label smoothing dropped
  paddle_warmup_short -> LinearWarmup(warmup_steps=WARMUP - 1): the porter counted the start_lr
              step as a warmup step; the warmup ends and the cosine starts one update early
              (lr 5e-4, 5e-3, 2.5e-3, 0 for updates 1..4)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_no_smoothing", "paddle_warmup_short"} | {"decay_norm"}  # torch's, ignored here
VOCAB, SEQ, D, HEADS, FFN, CLASSES = 64, 8, 32, 4, 64, 4
BATCH, DROPOUT = 8, 0.1
LR, BETA1, BETA2, EPS, WD, CLIP, SMOOTH = 5e-3, 0.9, 0.999, 1e-8, 0.1, 1.0, 0.1
WARMUP, TOTAL = 2, 4
_LABELS = [None]


class EncoderBlock(nn.Layer):
    def __init__(self, d, heads, ffn, dropout):
        super().__init__()
        self.heads = heads
        # no q/k/v biases (a key bias gets an exactly zero gradient, which Adam turns into noise steps)
        self.q_proj = nn.Linear(d, d, bias_attr=False)
        self.k_proj = nn.Linear(d, d, bias_attr=False)
        self.v_proj = nn.Linear(d, d, bias_attr=False)
        self.out_proj = nn.Linear(d, d)
        self.fc1 = nn.Linear(d, ffn)
        self.fc2 = nn.Linear(ffn, d)
        self.ln1 = nn.LayerNorm(d)
        self.ln2 = nn.LayerNorm(d)
        self.attn_drop = nn.Dropout(dropout)
        self.drop1 = nn.Dropout(dropout)
        self.drop2 = nn.Dropout(dropout)

    def _heads(self, x):  # [B, T, D] -> [B, H, T, D/H]
        b, t, d = x.shape
        return x.reshape([b, t, self.heads, d // self.heads]).transpose([0, 2, 1, 3])

    def forward(self, x):
        h = self.ln1(x)
        q, k, v = self._heads(self.q_proj(h)), self._heads(self.k_proj(h)), self._heads(self.v_proj(h))
        scores = paddle.matmul(q, k, transpose_y=True) / float(q.shape[-1]) ** 0.5
        probs = self.attn_drop(F.softmax(scores, axis=-1))
        ctx = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).flatten(2)
        x = x + self.drop1(self.out_proj(ctx))
        return x + self.drop2(self.fc2(F.gelu(self.fc1(self.ln2(x)))))


class TextClassifier(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D)
        self.pos = self.create_parameter([SEQ, D], default_initializer=nn.initializer.Normal(0.0, 0.02))
        self.emb_drop = nn.Dropout(DROPOUT)
        self.block = EncoderBlock(D, HEADS, FFN, DROPOUT)
        self.final_norm = nn.LayerNorm(D)
        self.classifier = nn.Linear(D, CLASSES)

    def forward(self, ids):
        x = self.emb_drop(self.embed(ids) + self.pos)
        x = self.final_norm(self.block(x))
        return self.classifier(x.mean(axis=1))


def model():
    bug(BUGS)
    paddle.seed(0)
    m = TextClassifier()
    for _name, sub in m.named_sublayers():
        if isinstance(sub, nn.LayerNorm):
            sub.weight.set_value(1.0 + paddle.normal(0.0, 0.1, sub.weight.shape))
            sub.bias.set_value(paddle.normal(0.0, 0.1, sub.bias.shape))
        elif isinstance(sub, nn.Linear) and sub.bias is not None:
            sub.bias.set_value(paddle.normal(0.0, 0.1, sub.bias.shape))
    m.train()
    return m


def inputs(step=0):
    rng = np.random.default_rng(4610 + step)
    ids = rng.integers(1, VOCAB, (BATCH, SEQ)).astype("int64")
    _LABELS[0] = rng.integers(0, CLASSES, (BATCH,)).astype("int64")
    return (paddle.to_tensor(ids),), {}


def loss(output):
    labels = paddle.to_tensor(_LABELS[0])
    if bug(BUGS) == "paddle_no_smoothing":
        return F.cross_entropy(output, labels)
    soft = F.label_smooth(F.one_hot(labels, CLASSES).astype(output.dtype), epsilon=SMOOTH)
    return F.cross_entropy(output, soft, soft_label=True)


def optimizer(model):
    no_decay = {id(p) for sub in model.sublayers() if isinstance(sub, nn.LayerNorm) for p in sub.parameters()}
    decay = {p.name for n, p in model.named_parameters() if not n.endswith("bias") and id(p) not in no_decay}
    warmup = WARMUP - 1 if bug(BUGS) == "paddle_warmup_short" else WARMUP
    sched = paddle.optimizer.lr.LinearWarmup(
        learning_rate=paddle.optimizer.lr.CosineAnnealingDecay(LR, T_max=TOTAL - WARMUP),
        warmup_steps=warmup, start_lr=0.1 * LR, end_lr=LR)
    opt = paddle.optimizer.AdamW(learning_rate=sched, beta1=BETA1, beta2=BETA2, epsilon=EPS,
                                 parameters=model.parameters(), weight_decay=WD,
                                 apply_decay_param_fun=lambda name: name in decay,
                                 grad_clip=paddle.nn.ClipGradByGlobalNorm(CLIP))
    return opt, sched
