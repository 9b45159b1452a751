"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a small pre-LN
transformer-encoder text classifier, trained 3 steps.

    word_emb Embedding(96, 32) + pos_emb (a raw [16, 32] parameter, create_parameter), emb_drop
    layers = LayerList of 2 EncoderLayer (pre-LN):
        h = x + dropout1(self_attn(attn_norm(x), attn_bias))
        y = h + dropout2(fc2(gelu(fc1(ffn_norm(h)))))
      self_attn: q_proj, k_proj, v_proj Linear(32, 32, bias_attr=False), out_proj Linear(32, 32);
      4 heads; additive padding bias (1 - mask) * -1e9; softmax; F.dropout on the probabilities
      (inline, no sublayer). EncoderLayer registers self_attn, fc1, fc2, attn_norm, ffn_norm,
      dropout1, dropout2 (norms registered after the FFN, called before).
    norm LayerNorm(32) -> masked mean over the unpadded tokens -> cls_drop -> classifier Linear(32, 3)
    TextClassifier registers classifier and cls_drop BEFORE the embeddings and layers.
Config dict: hidden_dropout 0.1 (embeddings, residual branches), attention_dropout 0.1,
classifier_dropout 0.0 (no dropout before the head: an nn.Dropout(0.0) call). Dropout calls per
forward: 7 with p > 0 (emb_drop; per layer the attention probabilities, dropout1, dropout2), then
cls_drop with p 0. model.train().

Data: ids [4, 8] (default_rng(33), ids 1..95) with padding (id 0) after lengths 8, 5, 6, 3;
attention_mask int64 [4, 8]; labels [0, 2, 1, 2]; the same batch every step.
Loss: label-smoothed cross-entropy (0.1) written the paddle way: F.cross_entropy(logits,
F.label_smooth(F.one_hot(labels, 3), epsilon=0.1), soft_label=True).
Optimizer: paddle.optimizer.AdamW(beta1 0.9, beta2 0.999, epsilon 1e-8, weight_decay 0.1,
apply_decay_param_fun = the parameter .names of every tensor whose structured name has none of
"bias", "norm", "emb": the 13 attention/FFN/classifier matrices), grad_clip =
nn.ClipGradByGlobalNorm(1.0); lr.LinearWarmup(learning_rate=2e-3, warmup_steps=3,
start_lr=5e-4, end_lr=2e-3): lr 5e-4, 1e-3, 1.5e-3 for updates 1..3. optimizer() returns
(opt, sched).
Weights: every matrix N(0, 0.2), biases N(0, 0.1), LayerNorm scales 1 + N(0, 0.1)
(_train_common.randomize_paddle, paddle.seed(0)).

PADIFF_BUG (this side only):
  paddle_cls_drop_or -> the head's dropout rate read as
                        cfg.get("classifier_dropout") or cfg["hidden_dropout"]: the configured 0.0
                        is falsy, so it falls back to 0.1 (the HF idiom is "... if ... is not None
                        else ...")
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug, randomize_paddle
from paddle import nn

BUGS = {"paddle_cls_drop_or"} | {"no_label_smoothing", "hf_no_decay_names"}  # the torch side's, ignored here
CFG = {"vocab_size": 96, "hidden": 32, "heads": 4, "ffn": 64, "layers": 2, "max_len": 16, "num_classes": 3,
       "hidden_dropout": 0.1, "attention_dropout": 0.1, "classifier_dropout": 0.0, "ln_eps": 1e-5}
LR, START_LR, WARMUP, WD, CLIP, SMOOTH = 2e-3, 5e-4, 3, 0.1, 1.0, 0.1

_rng = np.random.default_rng(33)
LENGTHS = [8, 5, 6, 3]
IDS = _rng.integers(1, 96, (4, 8)).astype("int64")
MASK = (np.arange(8)[None, :] < np.array(LENGTHS)[:, None]).astype("int64")
IDS = IDS * MASK  # pad id 0
LABELS = np.array([0, 2, 1, 2], dtype="int64")


class SelfAttention(nn.Layer):
    def __init__(self, hidden, heads, attn_dropout):
        super().__init__()
        self.num_heads, self.head_dim = heads, hidden // heads
        self.q_proj = nn.Linear(hidden, hidden, bias_attr=False)
        self.k_proj = nn.Linear(hidden, hidden, bias_attr=False)
        self.v_proj = nn.Linear(hidden, hidden, bias_attr=False)
        self.out_proj = nn.Linear(hidden, hidden)
        self.attn_dropout = attn_dropout

    def _heads(self, t):
        b, s, _ = t.shape
        return t.reshape([b, s, self.num_heads, self.head_dim]).transpose([0, 2, 1, 3])

    def forward(self, x, attn_bias):
        q, k, v = self._heads(self.q_proj(x)), self._heads(self.k_proj(x)), self._heads(self.v_proj(x))
        scores = paddle.matmul(q, k, transpose_y=True) * (self.head_dim ** -0.5) + attn_bias
        probs = F.dropout(F.softmax(scores, axis=-1), p=self.attn_dropout, training=self.training)
        ctx = paddle.matmul(probs, v).transpose([0, 2, 1, 3])
        return self.out_proj(ctx.reshape([ctx.shape[0], ctx.shape[1], -1]))


class EncoderLayer(nn.Layer):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["hidden"]
        self.self_attn = SelfAttention(d, cfg["heads"], cfg["attention_dropout"])
        self.fc1 = nn.Linear(d, cfg["ffn"])
        self.fc2 = nn.Linear(cfg["ffn"], d)
        self.attn_norm = nn.LayerNorm(d, epsilon=cfg["ln_eps"])
        self.ffn_norm = nn.LayerNorm(d, epsilon=cfg["ln_eps"])
        self.dropout1 = nn.Dropout(cfg["hidden_dropout"])
        self.dropout2 = nn.Dropout(cfg["hidden_dropout"])

    def forward(self, x, attn_bias):
        h = x + self.dropout1(self.self_attn(self.attn_norm(x), attn_bias))
        return h + self.dropout2(self.fc2(F.gelu(self.fc1(self.ffn_norm(h)))))


class TextClassifier(nn.Layer):
    def __init__(self, cfg, falsy_fallback=False):
        super().__init__()
        d = cfg["hidden"]
        self.classifier = nn.Linear(d, cfg["num_classes"])
        if falsy_fallback:  # the bug: 0.0 is falsy
            p_cls = cfg.get("classifier_dropout") or cfg["hidden_dropout"]
        else:
            p_cls = cfg["classifier_dropout"] if cfg.get("classifier_dropout") is not None else cfg["hidden_dropout"]
        self.cls_drop = nn.Dropout(p_cls)
        self.word_emb = nn.Embedding(cfg["vocab_size"], d)
        self.pos_emb = self.create_parameter([cfg["max_len"], d],
                                             default_initializer=nn.initializer.Normal(0.0, 0.02))
        self.emb_drop = nn.Dropout(cfg["hidden_dropout"])
        self.layers = nn.LayerList([EncoderLayer(cfg) for _ in range(cfg["layers"])])
        self.norm = nn.LayerNorm(d, epsilon=cfg["ln_eps"])

    def forward(self, input_ids, attention_mask):
        seq_len = input_ids.shape[1]
        x = self.emb_drop(self.word_emb(input_ids) + self.pos_emb[:seq_len])
        mask = attention_mask.astype(x.dtype)
        attn_bias = ((1.0 - mask) * -1e9).unsqueeze([1, 2])  # [B, 1, 1, S]
        for layer in self.layers:
            x = layer(x, attn_bias)
        x = self.norm(x)
        m = mask.unsqueeze(-1)
        pooled = paddle.sum(x * m, axis=1) / paddle.sum(m, axis=1)
        return self.classifier(self.cls_drop(pooled))


def model():
    b = bug(BUGS)
    paddle.seed(0)
    m = TextClassifier(CFG, falsy_fallback=b == "paddle_cls_drop_or")
    randomize_paddle(m, std=0.2, seed=0)
    m.train()
    return m


def inputs():
    return (paddle.to_tensor(IDS), paddle.to_tensor(MASK)), {}


def loss(logits):
    one_hot = F.one_hot(paddle.to_tensor(LABELS), CFG["num_classes"]).astype(logits.dtype)
    return F.cross_entropy(logits, F.label_smooth(one_hot, epsilon=SMOOTH), soft_label=True)


def optimizer(model):
    decay = [p.name for n, p in model.named_parameters() if not any(k in n for k in ("bias", "norm", "emb"))]
    sched = paddle.optimizer.lr.LinearWarmup(learning_rate=LR, warmup_steps=WARMUP, start_lr=START_LR, end_lr=LR)
    opt = paddle.optimizer.AdamW(learning_rate=sched, beta1=0.9, beta2=0.999, epsilon=1e-8,
                                 parameters=model.parameters(), weight_decay=WD,
                                 apply_decay_param_fun=lambda name: name in decay,
                                 grad_clip=nn.ClipGradByGlobalNorm(CLIP))
    return opt, sched
