"""Hand-written port in TRAINING mode, paddle side (written by "person A"): Direct Preference
Optimization (Rafailov et al. 2023) of a tiny causal LM against a frozen reference copy, 3 steps,
one preference batch per step.

    DPOModel: registers policy (CausalLM, dropout 0.1) then reference (CausalLM built from a
        config with every dropout 0, parameters stop_gradient=True); forward(chosen_ids,
        rejected_ids) concatenates [chosen; rejected] along the batch, runs the policy, then the
        reference under paddle.no_grad(), and returns (policy_logits, reference_logits), each
        [2B, T, V]
    CausalLM: tok_emb (Embedding V x H), pos_emb (Embedding 16 x H), emb_drop, blocks (LayerList of
        DecoderLayer), final_norm (LayerNorm), head (Linear H -> V, no bias)
    DecoderLayer (pre-LN): norm1, self_attn (Attention: q_proj, k_proj, v_proj, o_proj, attn_drop
        on the attention probabilities), drop1, norm2, mlp (MLP: fc_in, exact GELU functional,
        fc_out), drop2;  x = x + drop1(self_attn(norm1(x)));  x = x + drop2(mlp(norm2(x)))

vocab 64, hidden 32, 4 heads, FFN 64, 2 layers, sequences of 10 tokens; causal mask added to the
scores (-1e9 above the diagonal).

Data: inputs(step): 2 preference pairs per step from default_rng(2790 + step): a prompt of 2-3
tokens, a chosen and a rejected response of 3-6 tokens each, right-padded with id 0 to 10 tokens;
the response mask (1 on response tokens) is kept by the spec for loss().
Loss (DPO, sigmoid): per-sequence log-probabilities summed over the response tokens,
logp = sum_t mask[t] * log_softmax(logits[t - 1])[ids[t]] (log_softmax + take_along_axis on the
shifted logits); margin = (pi_c - ref_c) - (pi_r - ref_r); loss = -log_sigmoid(0.1 * margin).mean().
Optimizer: AdamW(lr 1e-3, betas 0.9/0.999, eps 1e-8, weight decay 0.01 on tensors of ndim >= 2)
over the policy's parameters (the reference is stop_gradient and not given to the optimizer).
Weights (person A): a "supervised fine-tuned" checkpoint drawn from numpy default_rng(2727)
(embeddings N(0, 0.5), matrices N(0, 1/sqrt(fan_in)), biases N(0, 0.05), LayerNorm 1 + N(0, 0.1) /
N(0, 0.1)) loaded into the reference; the policy is a DPO run resumed mid-way: the same weights
plus a drift N(0, 0.03) (default_rng(2728)), so the policy and the reference differ at step 0.

PADIFF_BUG (this side only):
  paddle_avg_logp -> the per-sequence log-probability is AVERAGED over the response tokens
              (sum / number of response tokens, the `average_log_prob=True` of IPO-style code)
              instead of summed, for the policy and the reference alike
"""
import math

import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import BETA1, BETA2, EPS, LR, WD, bug
from paddle import nn

BUGS = {"paddle_avg_logp"} | {"torch_ref_train", "torch_ref_unfrozen"}  # the torch side's, ignored here
VOCAB, HIDDEN, HEADS, FFN, LAYERS, MAX_POS, SEQ = 64, 32, 4, 64, 2, 16, 10
PAIRS, PAD, BETA = 2, 0, 0.1
DROPOUT = 0.1

_BATCH = {}


def preference_batch(step):
    """PAIRS (prompt + chosen, prompt + rejected) sequences and their response masks (numpy)."""
    rng = np.random.default_rng(2790 + step)
    chosen = np.full((PAIRS, SEQ), PAD, "int64")
    rejected = np.full((PAIRS, SEQ), PAD, "int64")
    mask_c = np.zeros((PAIRS, SEQ), "float32")
    mask_r = np.zeros((PAIRS, SEQ), "float32")
    for i in range(PAIRS):
        n_prompt = int(rng.integers(2, 4))
        n_c, n_r = int(rng.integers(3, 7)), int(rng.integers(3, 7))
        prompt = rng.integers(4, VOCAB, n_prompt)
        resp_c, resp_r = rng.integers(4, VOCAB, n_c), rng.integers(4, VOCAB, n_r)
        chosen[i, :n_prompt + n_c] = np.concatenate([prompt, resp_c])
        rejected[i, :n_prompt + n_r] = np.concatenate([prompt, resp_r])
        mask_c[i, n_prompt:n_prompt + n_c] = 1.0
        mask_r[i, n_prompt:n_prompt + n_r] = 1.0
    return chosen, rejected, mask_c, mask_r


class Attention(nn.Layer):
    def __init__(self, hidden, heads, attn_p):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.q_proj = nn.Linear(hidden, hidden)
        self.k_proj = nn.Linear(hidden, hidden)
        self.v_proj = nn.Linear(hidden, hidden)
        self.o_proj = nn.Linear(hidden, hidden)
        self.attn_drop = nn.Dropout(attn_p)

    def _split(self, t, b, s):
        return t.reshape([b, s, self.heads, self.head_dim]).transpose([0, 2, 1, 3])

    def forward(self, x):
        b, s = x.shape[0], x.shape[1]
        q = self._split(self.q_proj(x), b, s)
        k = self._split(self.k_proj(x), b, s)
        v = self._split(self.v_proj(x), b, s)
        scores = paddle.matmul(q, k, transpose_y=True) / math.sqrt(self.head_dim)
        causal = paddle.to_tensor(np.triu(np.full((s, s), -1e9), 1), dtype=scores.dtype)
        probs = self.attn_drop(F.softmax(scores + causal, axis=-1))
        ctx = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([b, s, self.heads * self.head_dim])
        return self.o_proj(ctx)


class MLP(nn.Layer):
    def __init__(self, hidden, ffn):
        super().__init__()
        self.fc_in = nn.Linear(hidden, ffn)
        self.fc_out = nn.Linear(ffn, hidden)

    def forward(self, x):
        return self.fc_out(F.gelu(self.fc_in(x)))


class DecoderLayer(nn.Layer):
    def __init__(self, cfg):
        super().__init__()
        self.norm1 = nn.LayerNorm(cfg["hidden"])
        self.self_attn = Attention(cfg["hidden"], cfg["heads"], cfg["attn_dropout"])
        self.drop1 = nn.Dropout(cfg["hidden_dropout"])
        self.norm2 = nn.LayerNorm(cfg["hidden"])
        self.mlp = MLP(cfg["hidden"], cfg["ffn"])
        self.drop2 = nn.Dropout(cfg["hidden_dropout"])

    def forward(self, x):
        x = x + self.drop1(self.self_attn(self.norm1(x)))
        return x + self.drop2(self.mlp(self.norm2(x)))


class CausalLM(nn.Layer):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab"], cfg["hidden"])
        self.pos_emb = nn.Embedding(cfg["max_pos"], cfg["hidden"])
        self.emb_drop = nn.Dropout(cfg["hidden_dropout"])
        self.blocks = nn.LayerList([DecoderLayer(cfg) for _ in range(cfg["layers"])])
        self.final_norm = nn.LayerNorm(cfg["hidden"])
        self.head = nn.Linear(cfg["hidden"], cfg["vocab"], bias_attr=False)

    def forward(self, ids):
        pos = paddle.arange(ids.shape[1], dtype="int64").unsqueeze(0)
        x = self.emb_drop(self.tok_emb(ids) + self.pos_emb(pos))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.final_norm(x))


def lm_config(dropout):
    return dict(vocab=VOCAB, hidden=HIDDEN, heads=HEADS, ffn=FFN, layers=LAYERS, max_pos=MAX_POS,
                hidden_dropout=dropout, attn_dropout=dropout)


class DPOModel(nn.Layer):
    def __init__(self):
        super().__init__()
        self.policy = CausalLM(lm_config(DROPOUT))
        self.reference = CausalLM(lm_config(0.0))  # a frozen copy: no dropout, no gradient
        for p in self.reference.parameters():
            p.stop_gradient = True

    def forward(self, chosen_ids, rejected_ids):
        ids = paddle.concat([chosen_ids, rejected_ids], axis=0)
        logits = self.policy(ids)
        with paddle.no_grad():
            ref_logits = self.reference(ids)
        return logits, ref_logits


def sft_checkpoint(lm):
    """numpy arrays by structured name: the supervised fine-tuned starting point."""
    rng = np.random.default_rng(2727)
    out = {}
    for name, p in lm.named_parameters():
        shape = tuple(p.shape)
        if name.endswith("emb.weight"):
            v = rng.normal(0.0, 0.5, shape)
        elif len(shape) == 2:
            v = rng.normal(0.0, 1.0 / math.sqrt(shape[0]), shape)
        elif "norm" in name and name.endswith("weight"):
            v = 1.0 + rng.normal(0.0, 0.1, shape)
        elif "norm" in name:
            v = rng.normal(0.0, 0.1, shape)
        else:
            v = rng.normal(0.0, 0.05, shape)
        out[name] = v
    return out


def model():
    bug(BUGS)  # an unknown name fails early
    m = DPOModel()
    sft = sft_checkpoint(m.policy)
    drift = np.random.default_rng(2728)
    for name, p in m.reference.named_parameters():
        p.set_value(sft[name].astype("float32"))
    for name, p in m.policy.named_parameters():
        p.set_value((sft[name] + drift.normal(0.0, 0.03, sft[name].shape)).astype("float32"))
    m.train()
    return m


def inputs(step=0):
    chosen, rejected, mask_c, mask_r = preference_batch(step)
    _BATCH.update(ids=np.concatenate([chosen, rejected]), mask=np.concatenate([mask_c, mask_r]))
    return (paddle.to_tensor(chosen), paddle.to_tensor(rejected)), {}


def sequence_logps(logits, ids, mask, average):
    logp = F.log_softmax(logits[:, :-1], axis=-1)
    tok = paddle.take_along_axis(logp, ids[:, 1:].unsqueeze(-1), axis=-1).squeeze(-1)
    m = mask[:, 1:]
    total = (tok * m).sum(axis=-1)
    return total / m.sum(axis=-1) if average else total


def loss(output):
    logits, ref_logits = output
    ids = paddle.to_tensor(_BATCH["ids"])
    mask = paddle.to_tensor(_BATCH["mask"]).astype(logits.dtype)
    average = bug(BUGS) == "paddle_avg_logp"
    pi = sequence_logps(logits, ids, mask, average)
    ref = sequence_logps(ref_logits, ids, mask, average)
    margin = (pi[:PAIRS] - ref[:PAIRS]) - (pi[PAIRS:] - ref[PAIRS:])
    return -F.log_sigmoid(BETA * margin).mean()


def optimizer(model):
    params = [p for p in model.parameters() if not p.stop_gradient]
    decay = {p.name for p in params if p.ndim >= 2}
    return paddle.optimizer.AdamW(learning_rate=LR, beta1=BETA1, beta2=BETA2, epsilon=EPS, parameters=params,
                                  weight_decay=WD, apply_decay_param_fun=lambda name: name in decay)
