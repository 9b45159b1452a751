"""Hand-written port, paddle side: a tiny Mistral-style decoder with sliding-window attention (written by "person A").

Sizes: vocab 64, hidden 32, 4 query heads and 2 key/value heads of 8 (grouped-query attention),
SwiGLU intermediate 48, 2 layers, sequence length 10, batch 2. SLIDING WINDOW 4: query position i
attends to key positions j with i - 4 < j <= i (itself and the 3 previous tokens), so for a
sequence of 10 the band cuts off most of the causal triangle. Rotary position embedding
(rotate-half convention, HF style, theta 10000). RMSNorm eps 1e-5, pre-norm blocks, final norm,
untied `lm_head`.

Paddle idioms on this side (PaddleNLP / HF-Mistral style):
- root `MistralForCausalLM`: `mistral` (`MistralModel`: `embed_tokens` (Normal(0, 0.05)),
  `layers` = LayerList of `MistralDecoderLayer`, `norm`) and `lm_head` nn.Linear(32, 64, no
  bias). No mask is built at the model level.
- `MistralDecoderLayer` registers `self_attn` and `mlp` BEFORE `input_layernorm` and
  `post_attention_layernorm` (the norms are called first).
- `MistralRMSNorm`: hand-written (create_parameter), x * rsqrt(mean(x^2) + eps) * w.
- `MistralAttention`: `q_proj` (32->32), `k_proj` (32->16), `v_proj` (32->16), `o_proj`
  (32->32), no biases, and a `rotary_emb` module (`MistralRotaryEmbedding`, forward(x, seq_len)
  -> (cos, sin), computed on the fly, no buffer) called by each attention. rotate-half rotary;
  keys / values shared with an expand + reshape repeat_kv (q head h uses kv head h // 2). The
  sliding-window mask is built INSIDE each attention as a BOOLEAN [L, L] mask (paddle.tril of
  ones AND NOT paddle.tril(ones, -4)) and applied with paddle.where(mask, scores, -inf).
- `MistralMLP`: `gate_proj`, `up_proj`, `down_proj` and an `act_fn` MODULE (nn.Silu):
  down(act_fn(gate(x)) * up(x)).
- model() gives the RMSNorm weights trained-looking values U(0.7, 1.3) (numpy seed 11).

The torch side (port_mistral_swa_torch.py) was written independently in the style of the
mistral-src reference: complex-number (interleaved-pair) rotary from a precomputed `freqs_cis`,
an ADDITIVE float band mask built once in the model forward (torch.log of a tril / triu band)
and passed to every block, torch.repeat_interleave for the keys / values, `wq` / `wk` / `wv` /
`wo`, `w1` / `w2` / `w3`.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_rope_bf16_cache -> MistralRotaryEmbedding returns cos / sin rounded through bfloat16
                            (a "cache in the model dtype" habit), precision-level
  paddle_mlp_act_gelu    -> MistralMLP builds its act_fn as nn.GELU() instead of nn.Silu()
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, HIDDEN, N_HEADS, N_KV_HEADS, INTER, N_LAYERS = 64, 32, 4, 2, 48, 2
HEAD_DIM = HIDDEN // N_HEADS
SLIDING_WINDOW, ROPE_THETA, RMS_EPS = 4, 10000.0, 1e-5
BATCH, SEQ = 2, 10
OWN_BUGS = {"paddle_rope_bf16_cache", "paddle_mlp_act_gelu"}
OTHER_BUGS = {"torch_window_plus_one", "torch_residual_from_normed"}


class MistralRMSNorm(nn.Layer):
    def __init__(self, hidden_size, epsilon=RMS_EPS):
        super().__init__()
        self.variance_epsilon = epsilon
        self.weight = self.create_parameter([hidden_size], default_initializer=nn.initializer.Constant(1.0))

    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        return hidden_states * paddle.rsqrt(variance + self.variance_epsilon) * self.weight


class MistralRotaryEmbedding(nn.Layer):
    def __init__(self, dim, base=ROPE_THETA, bf16_cache=False):
        super().__init__()
        self.dim, self.base, self.bf16_cache = dim, base, bf16_cache

    def forward(self, x, seq_len):
        inv_freq = 1.0 / (self.base ** (paddle.arange(0, self.dim, 2, dtype="float32") / self.dim))
        t = paddle.arange(seq_len, dtype="float32")
        freqs = t.unsqueeze(1) * inv_freq.unsqueeze(0)
        emb = paddle.concat([freqs, freqs], axis=-1)
        cos, sin = emb.cos(), emb.sin()
        if self.bf16_cache:
            cos = cos.astype("bfloat16").astype(x.dtype)
            sin = sin.astype("bfloat16").astype(x.dtype)
        return cos, sin


def rotate_half(x):
    x1, x2 = paddle.split(x, 2, axis=-1)
    return paddle.concat([-x2, x1], axis=-1)


def repeat_kv(x, n_rep):
    b, n_kv, s, d = x.shape
    return x.unsqueeze(2).expand([b, n_kv, n_rep, s, d]).reshape([b, n_kv * n_rep, s, d])


class MistralAttention(nn.Layer):
    def __init__(self, bf16_rope=False):
        super().__init__()
        self.q_proj = nn.Linear(HIDDEN, N_HEADS * HEAD_DIM, bias_attr=False)
        self.k_proj = nn.Linear(HIDDEN, N_KV_HEADS * HEAD_DIM, bias_attr=False)
        self.v_proj = nn.Linear(HIDDEN, N_KV_HEADS * HEAD_DIM, bias_attr=False)
        self.o_proj = nn.Linear(N_HEADS * HEAD_DIM, HIDDEN, bias_attr=False)
        self.rotary_emb = MistralRotaryEmbedding(HEAD_DIM, bf16_cache=bf16_rope)

    def forward(self, hidden_states):
        bsz, q_len, _ = hidden_states.shape
        q = self.q_proj(hidden_states).reshape([bsz, q_len, N_HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])
        k = self.k_proj(hidden_states).reshape([bsz, q_len, N_KV_HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])
        v = self.v_proj(hidden_states).reshape([bsz, q_len, N_KV_HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])
        cos, sin = self.rotary_emb(v, q_len)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = repeat_kv(k, N_HEADS // N_KV_HEADS)
        v = repeat_kv(v, N_HEADS // N_KV_HEADS)
        scores = paddle.matmul(q, k, transpose_y=True) / math.sqrt(HEAD_DIM)
        ones = paddle.ones([q_len, q_len], dtype="float32")
        causal = paddle.tril(ones).astype("bool")
        too_far = paddle.tril(ones, diagonal=-SLIDING_WINDOW).astype("bool")
        allowed = paddle.logical_and(causal, paddle.logical_not(too_far))  # [L, L]
        allowed = allowed.reshape([1, 1, q_len, q_len]).expand(scores.shape)
        scores = paddle.where(allowed, scores, paddle.full_like(scores, float("-inf")))
        probs = F.softmax(scores, axis=-1)
        out = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([bsz, q_len, HIDDEN])
        return self.o_proj(out)


class MistralMLP(nn.Layer):
    def __init__(self, act="silu"):
        super().__init__()
        self.gate_proj = nn.Linear(HIDDEN, INTER, bias_attr=False)
        self.up_proj = nn.Linear(HIDDEN, INTER, bias_attr=False)
        self.down_proj = nn.Linear(INTER, HIDDEN, bias_attr=False)
        self.act_fn = nn.Silu() if act == "silu" else nn.GELU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class MistralDecoderLayer(nn.Layer):
    def __init__(self, bf16_rope=False, act="silu"):
        super().__init__()
        self.self_attn = MistralAttention(bf16_rope)
        self.mlp = MistralMLP(act)
        self.input_layernorm = MistralRMSNorm(HIDDEN)
        self.post_attention_layernorm = MistralRMSNorm(HIDDEN)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = residual + self.self_attn(self.input_layernorm(hidden_states))
        residual = hidden_states
        return residual + self.mlp(self.post_attention_layernorm(hidden_states))


class MistralModel(nn.Layer):
    def __init__(self, bf16_rope=False, act="silu"):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN, weight_attr=nn.initializer.Normal(0.0, 0.05))
        self.layers = nn.LayerList([MistralDecoderLayer(bf16_rope, act) for _ in range(N_LAYERS)])
        self.norm = MistralRMSNorm(HIDDEN)

    def forward(self, input_ids):
        hidden_states = self.embed_tokens(input_ids)
        for layer in self.layers:
            hidden_states = layer(hidden_states)
        return self.norm(hidden_states)


class MistralForCausalLM(nn.Layer):
    def __init__(self, bf16_rope=False, act="silu"):
        super().__init__()
        self.mistral = MistralModel(bf16_rope, act)
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias_attr=False)

    def forward(self, input_ids):
        return self.lm_head(self.mistral(input_ids))


def _trained_look(m):
    rng = np.random.default_rng(11)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, MistralRMSNorm):
            layer.weight.set_value(rng.uniform(0.7, 1.3, HIDDEN).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_mistral_swa paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = MistralForCausalLM(bf16_rope=bug == "paddle_rope_bf16_cache",
                           act="gelu" if bug == "paddle_mlp_act_gelu" else "silu")
    _trained_look(m)
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(31)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 10, 64]
    return (output**2).mean()
