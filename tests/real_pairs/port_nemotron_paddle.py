"""Hand-written port, paddle side: a tiny Nemotron-style decoder LM (written by "person A").

Sizes: vocab 64, hidden 32, 4 query heads of 8, 2 key / value heads (grouped-query attention,
query head h reads kv head h // 2), squared-ReLU MLP (no gate) with intermediate 64, 2 layers,
sequence length 10, batch 2. Nemotron specifics:
  - "LayerNorm1p": a LayerNorm (with bias) whose weight is STORED as w - 1 and applied as
    (1 + w); eps 1e-5;
  - partial rotary: only the first half of each head (4 of 8 dims, partial_rotary_factor 0.5)
    is rotated, half-split pairs (rotate_half over those 4 dims), base 10000; the other 4 dims
    pass through;
  - MLP: down(relu(up(x))^2);
  - an untied lm_head.
Output: logits [2, 10, 64].

Paddle idioms on this side (HF Nemotron layout, batch-first [B, L, C]):
- root `NemotronLM` registers `embed_tokens`, `layers` (LayerList of `NemotronDecoderLayer`),
  `norm`, `lm_head` Linear(32, 64, no bias).
- `NemotronLayerNorm1p(nn.LayerNorm)`: weight initialised to 0 (the stored w - 1), forward
  F.layer_norm(x, ..., weight=self.weight + 1, bias=self.bias).
- `NemotronDecoderLayer`: `input_layernorm`, `self_attn`, `post_attention_layernorm`, `mlp`.
- `NemotronAttention`: separate `q_proj` Linear(32, 32), `k_proj` / `v_proj` Linear(32, 16),
  `o_proj` Linear(32, 32), all without bias, then a `rotary_emb` child
  (`NemotronRotaryEmbedding`, called with (v, seq_len), returns cos / sin [L, 4]); the partial
  split, rotate_half, the kv-head expansion (paddle.repeat_interleave on the head axis), the
  causal mask and F.softmax are inline.
- `NemotronMLP`: `up_proj` Linear(32, 64), `down_proj` Linear(64, 32), no bias; relu^2 inline
  (F.relu(x).square()).
- model() gives the embedding Normal(0, 0.05), the stored LayerNorm1p weights Normal(0, 0.15)
  (so the applied scale 1 + w is around 1, not 1) and biases Normal(0, 0.05) (rng seed 47).

The torch side (port_nemotron_torch.py) was written independently, Megatron-core style:
sequence-first activations, a plain nn.LayerNorm holding the applied weight directly, one fused
GQA-grouped linear_qkv, a root-level rotary module and a squared-ReLU activation module.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_rope_dim_full -> the rotary module's inverse frequencies use the full head dim (8) in
                          the exponent instead of the rotary dim (4): 1 / 10000^(2i / 8)
  paddle_ln_eps_1e6    -> NemotronLayerNorm1p's default epsilon is 1e-6 (copied from a Llama
                          RMSNorm) instead of the config's 1e-5, in every norm: precision-level
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, HIDDEN, N_HEADS, N_KV_HEADS, INTERMEDIATE, N_LAYERS = 64, 32, 4, 2, 64, 2
HEAD_DIM = HIDDEN // N_HEADS
PARTIAL_ROTARY_FACTOR, ROPE_THETA, NORM_EPS = 0.5, 10000.0, 1e-5
BATCH, SEQ = 2, 10
OWN_BUGS = {"paddle_rope_dim_full", "paddle_ln_eps_1e6"}
OTHER_BUGS = {"torch_gqa_tile", "torch_sqrelu_order"}
_BUG = {"name": ""}


def _eps_default():
    return 1e-6 if _BUG["name"] == "paddle_ln_eps_1e6" else NORM_EPS


class NemotronLayerNorm1p(nn.LayerNorm):
    def __init__(self, normalized_shape, epsilon=None):
        super().__init__(normalized_shape, epsilon=_eps_default() if epsilon is None else epsilon,
                         weight_attr=paddle.ParamAttr(initializer=nn.initializer.Constant(0.0)))

    def forward(self, x):
        return F.layer_norm(x, self._normalized_shape, weight=self.weight + 1.0, bias=self.bias,
                            epsilon=self._epsilon)


def rotate_half(x):
    x1, x2 = x.chunk(2, axis=-1)
    return paddle.concat([-x2, x1], axis=-1)


class NemotronRotaryEmbedding(nn.Layer):
    def __init__(self, dim, head_dim, base=ROPE_THETA):
        super().__init__()
        self.dim, self.head_dim, self.base = dim, head_dim, base
        self.exponent_dim = head_dim if _BUG["name"] == "paddle_rope_dim_full" else dim

    def forward(self, x, seq_len):
        inv_freq = 1.0 / (self.base ** (paddle.arange(0, self.dim, 2, dtype="float32") / self.exponent_dim))
        t = paddle.arange(seq_len, dtype="float32")
        freqs = paddle.outer(t, inv_freq)
        emb = paddle.concat([freqs, freqs], axis=-1)
        return emb.cos().astype(x.dtype), emb.sin().astype(x.dtype)


class NemotronAttention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.num_heads, self.num_kv_heads, self.head_dim = N_HEADS, N_KV_HEADS, HEAD_DIM
        self.rot_dim = int(HEAD_DIM * PARTIAL_ROTARY_FACTOR)
        self.q_proj = nn.Linear(HIDDEN, N_HEADS * HEAD_DIM, bias_attr=False)
        self.k_proj = nn.Linear(HIDDEN, N_KV_HEADS * HEAD_DIM, bias_attr=False)
        self.v_proj = nn.Linear(HIDDEN, N_KV_HEADS * HEAD_DIM, bias_attr=False)
        self.o_proj = nn.Linear(N_HEADS * HEAD_DIM, HIDDEN, bias_attr=False)
        self.rotary_emb = NemotronRotaryEmbedding(self.rot_dim, HEAD_DIM)

    def _rope(self, x, cos, sin):
        x_rot, x_pass = x[..., : self.rot_dim], x[..., self.rot_dim :]
        x_rot = x_rot * cos + rotate_half(x_rot) * sin
        return paddle.concat([x_rot, x_pass], axis=-1)

    def forward(self, hidden_states):
        bsz, q_len, _ = hidden_states.shape
        q = self.q_proj(hidden_states).reshape([bsz, q_len, self.num_heads, self.head_dim]).transpose([0, 2, 1, 3])
        k = self.k_proj(hidden_states).reshape([bsz, q_len, self.num_kv_heads, self.head_dim]).transpose([0, 2, 1, 3])
        v = self.v_proj(hidden_states).reshape([bsz, q_len, self.num_kv_heads, self.head_dim]).transpose([0, 2, 1, 3])
        cos, sin = self.rotary_emb(v, seq_len=q_len)
        q, k = self._rope(q, cos, sin), self._rope(k, cos, sin)
        n_rep = self.num_heads // self.num_kv_heads
        k = paddle.repeat_interleave(k, n_rep, axis=1)
        v = paddle.repeat_interleave(v, n_rep, axis=1)
        scores = paddle.matmul(q, k, transpose_y=True) / math.sqrt(self.head_dim)
        future = paddle.triu(paddle.ones([q_len, q_len], dtype="float32"), diagonal=1)
        scores = paddle.where(future > 0, paddle.full_like(scores, float("-inf")), scores)
        probs = F.softmax(scores, axis=-1)
        out = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([bsz, q_len, HIDDEN])
        return self.o_proj(out)


class NemotronMLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.up_proj = nn.Linear(HIDDEN, INTERMEDIATE, bias_attr=False)
        self.down_proj = nn.Linear(INTERMEDIATE, HIDDEN, bias_attr=False)

    def forward(self, x):
        return self.down_proj(F.relu(self.up_proj(x)).square())


class NemotronDecoderLayer(nn.Layer):
    def __init__(self):
        super().__init__()
        self.input_layernorm = NemotronLayerNorm1p(HIDDEN)
        self.self_attn = NemotronAttention()
        self.post_attention_layernorm = NemotronLayerNorm1p(HIDDEN)
        self.mlp = NemotronMLP()

    def forward(self, hidden_states):
        hidden_states = hidden_states + self.self_attn(self.input_layernorm(hidden_states))
        return hidden_states + self.mlp(self.post_attention_layernorm(hidden_states))


class NemotronLM(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.LayerList([NemotronDecoderLayer() for _ in range(N_LAYERS)])
        self.norm = NemotronLayerNorm1p(HIDDEN)
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias_attr=False)

    def forward(self, input_ids):
        hidden_states = self.embed_tokens(input_ids)
        for layer in self.layers:
            hidden_states = layer(hidden_states)
        return self.lm_head(self.norm(hidden_states))


def _trained_look(m):
    rng = np.random.default_rng(47)
    m.embed_tokens.weight.set_value(rng.normal(0.0, 0.05, (VOCAB, HIDDEN)).astype("float32"))
    for _name, layer in m.named_sublayers():
        if isinstance(layer, NemotronLayerNorm1p):
            layer.weight.set_value(rng.normal(0.0, 0.15, HIDDEN).astype("float32"))  # stored w - 1
            layer.bias.set_value(rng.normal(0.0, 0.05, HIDDEN).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_nemotron paddle: unknown PADIFF_BUG {bug!r}")
    _BUG["name"] = bug
    try:
        paddle.seed(0)
        m = NemotronLM()
    finally:
        _BUG["name"] = ""
    _trained_look(m)
    m.eval()
    return m


def _ids():
    return np.random.default_rng(61).integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 10, 64]
    return (output**2).mean()
