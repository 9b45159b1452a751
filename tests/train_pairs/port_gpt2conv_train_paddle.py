"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a tiny GPT-2-style
causal LM with SEPARATE q/k/v projections (paddle nn.Linear, weight [in, out]), trained 3 steps.

    tok_embed (128 x 32), pos_embed (16 x 32), emb_drop
    layers.0..1 DecoderLayer (pre-norm; registered attn, ffn, norm1, norm2): attn (q_proj,
        k_proj, v_proj, out_proj, attn_drop on the probabilities, resid_drop after out_proj),
        ffn (fc1 32->128, tanh GELU, fc2 128->32, drop), norm1/norm2 (LayerNorm eps 1e-5)
    final_norm, logits = h @ tok_embed.weight^T (TIED output embedding: no lm_head parameter)
No bias on q/k/v (qkv_bias False on both sides): a key bias has an exactly zero gradient
(softmax is shift invariant), and Adam turns its fp32 rounding noise (~1e-8) into steps of about
0.1 lr of independent sign on each side (1.4e-3 apart after 3 updates when tried), a clean-twin
difference no tool should have to explain. out_proj, fc1, fc2 keep their biases.
Dropout 0.1 everywhere (embeddings, attention probabilities, attention output, MLP output):
7 calls per forward. Causal mask built on the fly (no buffer). model.train().

Data: ids [2, 8] from default_rng(7) in [4, 128), the same batch every step; loss = next-token
cross-entropy on logits[:, :-1] vs ids[:, 1:].

Optimizer (GPT-2 style): AdamW(lr 1e-3, beta1 0.9, beta2 0.95, epsilon 1e-8, weight_decay 0.1)
with decay on tensors of ndim >= 2 only (apply_decay_param_fun on p.name: embeddings and
projection matrices; not biases, not LayerNorm), grad_clip=ClipGradByGlobalNorm(1.0).
Weights: person A's init = _train_common.randomize_paddle(std=0.1) (matrices N(0, 0.1), biases
N(0, 0.1), LayerNorm scales 1 + N(0, 0.1)). With N(0, 0.2) matrices some MLP units sat in the far
negative tail of the tanh GELU, where paddle's F.gelu(approximate=True) and torch's written-out
formula differ in float32 (x = -5: 0 vs -3e-7); Adam turned the resulting 1e-8 gradient
differences into a 1.3e-4 difference of one weight (shared-mask check).

PADIFF_BUG (this side only):
  paddle_decay_all -> AdamW built without apply_decay_param_fun: paddle then decays EVERY
              parameter (biases and LayerNorm scales/shifts too); torch decays 2-D tensors only
  paddle_no_shift -> the loss forgets the shift: cross-entropy of logits[:, :-1] against
              ids[:, :-1] (each position scored on its own token)
"""
import math

import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug, randomize_paddle
from paddle import nn

BUGS = {"paddle_decay_all", "paddle_no_shift"} | {"attn_drop_default"}  # the torch side's, ignored here
VOCAB, N_POS, D, HEADS, LAYERS = 128, 16, 32, 4, 2
BATCH, SEQ = 2, 8
P_DROP = 0.1
LR, BETA1, BETA2, EPS, WD, CLIP = 1e-3, 0.9, 0.95, 1e-8, 0.1, 1.0
IDS = np.random.default_rng(7).integers(4, VOCAB, (BATCH, SEQ)).astype("int64")


class SelfAttention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(D, D, bias_attr=False)  # no q/k/v bias (see the module docstring)
        self.k_proj = nn.Linear(D, D, bias_attr=False)
        self.v_proj = nn.Linear(D, D, bias_attr=False)
        self.out_proj = nn.Linear(D, D)
        self.attn_drop = nn.Dropout(P_DROP)
        self.resid_drop = nn.Dropout(P_DROP)
        self.scale = 1.0 / math.sqrt(D // HEADS)

    def _heads(self, x):  # [B, T, D] -> [B, H, T, hd]
        b, t, _ = x.shape
        return x.reshape([b, t, HEADS, D // HEADS]).transpose([0, 2, 1, 3])

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self._heads(self.q_proj(x)), self._heads(self.k_proj(x)), self._heads(self.v_proj(x))
        scores = paddle.matmul(q, k, transpose_y=True) * self.scale
        scores = scores + paddle.triu(paddle.full([t, t], -1e9, dtype=scores.dtype), diagonal=1)
        probs = self.attn_drop(F.softmax(scores, axis=-1))
        ctx = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([b, t, D])
        return self.resid_drop(self.out_proj(ctx))


class FeedForward(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(D, 4 * D)
        self.fc2 = nn.Linear(4 * D, D)
        self.drop = nn.Dropout(P_DROP)

    def forward(self, x):
        return self.drop(self.fc2(F.gelu(self.fc1(x), approximate=True)))


class DecoderLayer(nn.Layer):
    def __init__(self):
        super().__init__()
        self.attn = SelfAttention()
        self.ffn = FeedForward()
        self.norm1 = nn.LayerNorm(D, epsilon=1e-5)
        self.norm2 = nn.LayerNorm(D, epsilon=1e-5)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.ffn(self.norm2(x))


class TinyGPT(nn.Layer):
    def __init__(self):
        super().__init__()
        self.tok_embed = nn.Embedding(VOCAB, D)
        self.pos_embed = nn.Embedding(N_POS, D)
        self.emb_drop = nn.Dropout(P_DROP)
        self.layers = nn.LayerList([DecoderLayer() for _ in range(LAYERS)])
        self.final_norm = nn.LayerNorm(D, epsilon=1e-5)

    def forward(self, ids):
        pos = paddle.arange(ids.shape[1], dtype="int64").unsqueeze(0)
        x = self.emb_drop(self.tok_embed(ids) + self.pos_embed(pos))
        for layer in self.layers:
            x = layer(x)
        return paddle.matmul(self.final_norm(x), self.tok_embed.weight, transpose_y=True)  # tied


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = TinyGPT()
    randomize_paddle(m, std=0.1)  # matrices N(0, 0.1): few saturated tanh-GELU units (see above)
    m.train()
    return m


def inputs():
    return (paddle.to_tensor(IDS),), {}


def loss(output):
    v = output.shape[-1]
    target = IDS[:, :-1] if bug(BUGS) == "paddle_no_shift" else IDS[:, 1:]
    return F.cross_entropy(output[:, :-1].reshape([-1, v]), paddle.to_tensor(target.reshape(-1)))


def optimizer(model):
    params = [p for p in model.parameters() if not p.stop_gradient]
    decay = {p.name for p in params if p.ndim >= 2}
    fun = None if bug(BUGS) == "paddle_decay_all" else (lambda name: name in decay)
    return paddle.optimizer.AdamW(learning_rate=LR, beta1=BETA1, beta2=BETA2, epsilon=EPS, parameters=params,
                                  weight_decay=WD, apply_decay_param_fun=fun,
                                  grad_clip=paddle.nn.ClipGradByGlobalNorm(CLIP))
