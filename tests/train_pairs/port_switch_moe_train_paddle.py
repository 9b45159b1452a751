"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a tiny
Switch-Transformer-style encoder classifier with a top-1 routed mixture-of-experts FFN in every
layer, trained 3 steps with cross-entropy + the Switch load-balancing auxiliary loss.

    SwitchClassifier: registers embed_tokens (Embedding 64 x 32), embed_positions (Embedding 8 x 32),
        emb_dropout (nn.Dropout 0.1), blocks (LayerList of 2 SwitchBlock), final_norm (LayerNorm),
        classifier (Linear 32 -> 3)
    SwitchBlock (pre-LN): attn_norm, attn (SelfAttention), attn_dropout (nn.Dropout 0.1, on the
        attention output before the residual add), ffn_norm, moe (SwitchMoE)
    SelfAttention: q_proj, k_proj, v_proj (Linear 32 -> 32, no bias), out_proj (Linear 32 -> 32);
        4 heads of 8; softmax, then the attention-probability dropout INLINE (F.dropout, p 0.1)
    SwitchMoE: router (Linear 32 -> 4, no bias), experts (LayerList of 4 Expert: fc1 Linear 32 -> 64,
        relu, fc2 Linear 64 -> 32), dropout (nn.Dropout 0.2, the MoE output dropout);
        probs = softmax(router(x)); expert = argmax; gate = max prob; every expert runs on every
        token and its output is kept where the one-hot routing mask says (dense masked dispatch,
        no capacity); y = gate * expert_out, then the dropout
    forward(input_ids [4, 8]) -> (logits [4, 3], router_probs (one [32, 4] per layer),
                                  expert_index (one [32] int64 per layer))
    pooling: final_norm, then the mean over the 8 tokens

Loss: cross_entropy(logits, labels) + 0.01 * sum over layers of
      num_experts * sum_e(fraction_routed_e * mean_prob_e), fraction_routed from F.one_hot.
Optimizer: AdamW(lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight decay 0.01 on tensors of ndim >= 2
only), grad_clip=ClipGradByGlobalNorm(1.0) (_train_common.paddle_adamw(clip=True)).
Data: a new batch per step (numpy default_rng(5300 + step)): ids [4, 8] in [4, 64), labels [4].
Weights: _train_common.randomize_paddle (matrices N(0, 0.2), biases N(0, 0.1), LayerNorm scales
1 + N(0, 0.1)).

PADIFF_BUG (this side only):
  paddle_moe_dropout_p -> SwitchMoE's output dropout is built with the hidden dropout rate (0.1)
                          instead of the MoE dropout rate (0.2)
  paddle_aux_mean      -> the auxiliary loss ported from the HF formula mean(f * P) * E**2 as
                          mean(f * P) * E: the balancing term is num_experts (4) times too small
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug, paddle_adamw, randomize_paddle
from paddle import nn

BUGS = {"paddle_moe_dropout_p", "paddle_aux_mean"} | {"torch_decay_by_ndim"}  # the torch side's, ignored here

CFG = dict(vocab=64, max_len=8, d_model=32, n_heads=4, d_expert=64, n_experts=4, n_layers=2, n_classes=3,
           hidden_dropout=0.1, attention_dropout=0.1, moe_dropout=0.2, aux_coef=0.01)
BATCH, SEQ = 4, 8

_LABELS = {}


class SelfAttention(nn.Layer):
    def __init__(self, d, heads, attn_p):
        super().__init__()
        self.heads, self.head_dim, self.attn_p = heads, d // heads, attn_p
        self.q_proj = nn.Linear(d, d, bias_attr=False)
        self.k_proj = nn.Linear(d, d, bias_attr=False)
        self.v_proj = nn.Linear(d, d, bias_attr=False)
        self.out_proj = nn.Linear(d, d)

    def _split(self, t):
        b, s, _ = t.shape
        return t.reshape([b, s, self.heads, self.head_dim]).transpose([0, 2, 1, 3])

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self._split(self.q_proj(x)), self._split(self.k_proj(x)), self._split(self.v_proj(x))
        scores = paddle.matmul(q, k, transpose_y=True) / (self.head_dim ** 0.5)
        probs = F.softmax(scores, axis=-1)
        probs = F.dropout(probs, p=self.attn_p, training=self.training)
        ctx = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([b, s, d])
        return self.out_proj(ctx)


class Expert(nn.Layer):
    def __init__(self, d, h):
        super().__init__()
        self.fc1 = nn.Linear(d, h)
        self.fc2 = nn.Linear(h, d)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class SwitchMoE(nn.Layer):
    def __init__(self, d, h, n_experts, p):
        super().__init__()
        self.n_experts = n_experts
        self.router = nn.Linear(d, n_experts, bias_attr=False)
        self.experts = nn.LayerList([Expert(d, h) for _ in range(n_experts)])
        self.dropout = nn.Dropout(p)

    def forward(self, x):
        b, s, d = x.shape
        tokens = x.reshape([b * s, d])
        probs = F.softmax(self.router(tokens), axis=-1)  # [T, E]
        expert_index = paddle.argmax(probs, axis=-1)  # [T]
        gate = paddle.max(probs, axis=-1, keepdim=True)  # [T, 1] = probs at the chosen expert
        mask = F.one_hot(expert_index, self.n_experts).astype(tokens.dtype)  # [T, E]
        outs = paddle.stack([expert(tokens) for expert in self.experts], axis=1)  # [T, E, d]
        y = (outs * mask.unsqueeze(-1)).sum(axis=1) * gate
        y = self.dropout(y.reshape([b, s, d]))
        return y, probs, expert_index


class SwitchBlock(nn.Layer):
    def __init__(self, cfg, moe_p):
        super().__init__()
        d = cfg["d_model"]
        self.attn_norm = nn.LayerNorm(d)
        self.attn = SelfAttention(d, cfg["n_heads"], cfg["attention_dropout"])
        self.attn_dropout = nn.Dropout(cfg["hidden_dropout"])
        self.ffn_norm = nn.LayerNorm(d)
        self.moe = SwitchMoE(d, cfg["d_expert"], cfg["n_experts"], moe_p)

    def forward(self, x):
        x = x + self.attn_dropout(self.attn(self.attn_norm(x)))
        y, probs, idx = self.moe(self.ffn_norm(x))
        return x + y, probs, idx


class SwitchClassifier(nn.Layer):
    def __init__(self, cfg, moe_p):
        super().__init__()
        d = cfg["d_model"]
        self.embed_tokens = nn.Embedding(cfg["vocab"], d)
        self.embed_positions = nn.Embedding(cfg["max_len"], d)
        self.emb_dropout = nn.Dropout(cfg["hidden_dropout"])
        self.blocks = nn.LayerList([SwitchBlock(cfg, moe_p) for _ in range(cfg["n_layers"])])
        self.final_norm = nn.LayerNorm(d)
        self.classifier = nn.Linear(d, cfg["n_classes"])

    def forward(self, input_ids):
        pos = paddle.arange(input_ids.shape[1], dtype="int64")
        h = self.emb_dropout(self.embed_tokens(input_ids) + self.embed_positions(pos).unsqueeze(0))
        all_probs, all_idx = [], []
        for block in self.blocks:
            h, probs, idx = block(h)
            all_probs.append(probs)
            all_idx.append(idx)
        pooled = self.final_norm(h).mean(axis=1)
        return self.classifier(pooled), tuple(all_probs), tuple(all_idx)


def model():
    b = bug(BUGS)
    moe_p = CFG["hidden_dropout"] if b == "paddle_moe_dropout_p" else CFG["moe_dropout"]
    paddle.seed(0)
    m = SwitchClassifier(CFG, moe_p)
    randomize_paddle(m, seed=53)
    m.train()
    return m


def batch(step):
    rng = np.random.default_rng(5300 + step)
    ids = rng.integers(4, CFG["vocab"], (BATCH, SEQ)).astype("int64")
    labels = rng.integers(0, CFG["n_classes"], BATCH).astype("int64")
    return ids, labels


def inputs(step=0):
    ids, labels = batch(step)
    _LABELS["y"] = labels
    return (paddle.to_tensor(ids),), {}


def loss(output):
    logits, router_probs, expert_index = output
    n_exp = CFG["n_experts"]
    ce = F.cross_entropy(logits, paddle.to_tensor(_LABELS["y"]))
    aux = paddle.zeros([], dtype=logits.dtype)
    for probs, idx in zip(router_probs, expert_index):
        frac = F.one_hot(idx, n_exp).astype(probs.dtype).mean(axis=0)  # fraction of tokens per expert
        mean_prob = probs.mean(axis=0)  # mean router probability per expert
        if bug(BUGS) == "paddle_aux_mean":
            aux = aux + paddle.mean(frac * mean_prob) * n_exp
        else:
            aux = aux + n_exp * paddle.sum(frac * mean_prob)
    return ce + CFG["aux_coef"] * aux


def optimizer(model):
    return paddle_adamw(model, clip=True)
