"""Hand-written port, paddle side: a tiny Mistral-style decoder LM (written by "person A").

Sizes: vocab 80, hidden 32, 4 query heads and 2 key/value heads of 8 (grouped-query attention),
SwiGLU MLP with intermediate 64, 2 layers, RMSNorm eps 1e-5, rope_theta 1e6 (Mistral v0.2
config), causal attention restricted to a SLIDING WINDOW of 4 tokens (token i sees tokens
i-3..i), sequence length 12, batch 2. No biases anywhere.

Paddle idioms on this side (paddlenlp-like, but every class written by hand):
- root `MistralLM`: `embed_tokens` (nn.Embedding, Normal(0, 0.1)), `layers` (LayerList of
  `MistralDecoderLayer`), `final_norm`, and an UNTIED `lm_head` Linear(32, 80, no bias,
  weight [in, out]) whose weight is set to embed_tokens.weight.T at construction (the model was
  converted from a checkpoint with tied embeddings and the porter kept a separate head).
- `MistralDecoderLayer` registers `self_attn`, `mlp` BEFORE `input_layernorm`,
  `post_attention_layernorm` (the norms are called first): pre-norm residual blocks.
- `MistralRMSNorm` is hand-written (create_parameter weight, Normal(1, 0.1)):
  x * rsqrt(mean(x^2, axis=-1) + eps) * w.
- `MistralAttention`: SEPARATE q_proj (32 -> 32), k_proj (32 -> 16), v_proj (32 -> 16), o_proj.
  Rotary embeddings in the HF "rotate_half" layout (dims i and i + 4 of a head form a pair);
  the cos / sin tables are computed inline in the attention forward from rope_theta (no buffer,
  no module). The 2 kv heads are repeated with paddle.repeat_interleave (query head h uses kv
  head h // 2). The sliding-window causal mask is built inline in the attention forward from
  arange comparisons (keep j <= i and i - j < 4) and applied with paddle.where(-inf);
  explicit matmul, F.softmax in float32.
- `MistralMLP`: gate_proj, up_proj, down_proj; down(silu(gate(x)) * up(x)), F.silu inline.

The torch side (port_gqa_torch.py) was written independently in the mistral-src style: one
packed wqkv, a packed w13, complex-number rope on INTERLEAVED pairs (so its q / k rows are a
per-head permutation of this side's q_proj / k_proj columns, see port_gqa_hook.py), expand +
reshape for the kv heads, the mask built in the root and F.scaled_dot_product_attention, and a
tied output head.

PADIFF_BUG names of this side:
  paddle_rope_theta_default -> every attention builds its rotary tables with the LLaMA default
                               base 10000 instead of the config's rope_theta 1e6 (the attention
                               constructor's default argument was used, config not passed)
  paddle_rmsnorm_axis1      -> MistralRMSNorm takes the mean of squares over axis=1 (written and
                               tested on 2-D [tokens, hidden] input; on the model's 3-D
                               [batch, seq, hidden] input axis 1 is the SEQUENCE axis)
The torch side's bug names are accepted and ignored; any other name raises ValueError.
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, HIDDEN, HEADS, KV_HEADS, INTER, LAYERS = 80, 32, 4, 2, 64, 2
HEAD_DIM = HIDDEN // HEADS
RMS_EPS, ROPE_THETA, SLIDING_WINDOW = 1e-5, 1e6, 4
BATCH, SEQ = 2, 12
OWN_BUGS = {"paddle_rope_theta_default", "paddle_rmsnorm_axis1"}
OTHER_BUGS = {"swa_window_plus_one"}


class MistralRMSNorm(nn.Layer):
    def __init__(self, hidden_size, epsilon=RMS_EPS, axis=-1):
        super().__init__()
        self.weight = self.create_parameter(
            shape=[hidden_size], dtype="float32", default_initializer=nn.initializer.Normal(1.0, 0.1))
        self.epsilon = epsilon
        self.axis = axis

    def forward(self, x):
        variance = x.pow(2).mean(axis=self.axis, keepdim=True)
        return x * paddle.rsqrt(variance + self.epsilon) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return paddle.concat([-x[..., half:], x[..., :half]], axis=-1)


class MistralAttention(nn.Layer):
    def __init__(self, rope_theta=10000.0):
        super().__init__()
        self.rope_theta = rope_theta
        self.q_proj = nn.Linear(HIDDEN, HEADS * HEAD_DIM, bias_attr=False)
        self.k_proj = nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias_attr=False)
        self.v_proj = nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias_attr=False)
        self.o_proj = nn.Linear(HEADS * HEAD_DIM, HIDDEN, bias_attr=False)

    def _cos_sin(self, seq_len):
        inv_freq = 1.0 / (self.rope_theta ** (paddle.arange(0, HEAD_DIM, 2, dtype="float32") / HEAD_DIM))
        t = paddle.arange(seq_len, dtype="float32")
        freqs = t.unsqueeze(1) * inv_freq.unsqueeze(0)  # [T, dim / 2]
        emb = paddle.concat([freqs, freqs], axis=-1)  # [T, dim]
        return emb.cos(), emb.sin()

    def forward(self, hidden_states):
        bsz, q_len, _ = hidden_states.shape
        q = self.q_proj(hidden_states).reshape([bsz, q_len, HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])
        k = self.k_proj(hidden_states).reshape([bsz, q_len, KV_HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])
        v = self.v_proj(hidden_states).reshape([bsz, q_len, KV_HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])

        cos, sin = self._cos_sin(q_len)  # [T, dim], broadcast over [B, H, T, dim]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin

        n_rep = HEADS // KV_HEADS
        k = paddle.repeat_interleave(k, n_rep, axis=1)
        v = paddle.repeat_interleave(v, n_rep, axis=1)

        scores = paddle.matmul(q, k, transpose_y=True) / math.sqrt(HEAD_DIM)
        i = paddle.arange(q_len).unsqueeze(1)
        j = paddle.arange(q_len).unsqueeze(0)
        keep = (j <= i) & (i - j < SLIDING_WINDOW)  # [T, T]
        scores = paddle.where(keep, scores, paddle.full_like(scores, float("-inf")))
        probs = F.softmax(scores, axis=-1, dtype="float32")
        out = paddle.matmul(probs, v)  # [B, H, T, dim]
        out = out.transpose([0, 2, 1, 3]).reshape([bsz, q_len, HEADS * HEAD_DIM])
        return self.o_proj(out)


class MistralMLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(HIDDEN, INTER, bias_attr=False)
        self.up_proj = nn.Linear(HIDDEN, INTER, bias_attr=False)
        self.down_proj = nn.Linear(INTER, HIDDEN, bias_attr=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class MistralDecoderLayer(nn.Layer):
    def __init__(self, rope_theta, norm_axis):
        super().__init__()
        self.self_attn = MistralAttention(rope_theta=rope_theta)
        self.mlp = MistralMLP()
        self.input_layernorm = MistralRMSNorm(HIDDEN, axis=norm_axis)
        self.post_attention_layernorm = MistralRMSNorm(HIDDEN, axis=norm_axis)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.self_attn(self.input_layernorm(hidden_states))
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.mlp(self.post_attention_layernorm(hidden_states))
        return residual + hidden_states


class MistralLM(nn.Layer):
    def __init__(self, rope_theta_default=False, rmsnorm_axis1=False):
        super().__init__()
        norm_axis = 1 if rmsnorm_axis1 else -1
        if rope_theta_default:  # the bug: MistralAttention() with its default base
            theta = 10000.0
        else:
            theta = ROPE_THETA
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN, weight_attr=nn.initializer.Normal(0.0, 0.1))
        self.layers = nn.LayerList([MistralDecoderLayer(theta, norm_axis) for _ in range(LAYERS)])
        self.final_norm = MistralRMSNorm(HIDDEN, axis=norm_axis)
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias_attr=False)
        self.lm_head.weight.set_value(self.embed_tokens.weight.T)  # same values as the tied checkpoint

    def forward(self, input_ids):
        hidden_states = self.embed_tokens(input_ids)
        for layer in self.layers:
            hidden_states = layer(hidden_states)
        return self.lm_head(self.final_norm(hidden_states))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_gqa paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = MistralLM(rope_theta_default=bug == "paddle_rope_theta_default",
                  rmsnorm_axis1=bug == "paddle_rmsnorm_axis1")
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(17)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 12, 80]
    return (output**2).mean()
