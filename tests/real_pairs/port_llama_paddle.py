"""Hand-written port, paddle side: a tiny LLaMA-like decoder LM (written by "person A").

paddlenlp-style code, written by hand: `llama` (LlamaModel: embed_tokens, layers, norm) and an
untied `lm_head` (Linear(32, 96), no bias, weight [in, out]). Sizes: vocab 96, hidden 32, 4 query heads
and 2 key/value heads of 8 (grouped-query attention, 2 query heads per kv head), SwiGLU MLP
with intermediate 64, 2 layers, RMSNorm eps 1e-5, rope base 10000, no biases anywhere.

- LlamaRMSNorm is written by hand: x * rsqrt(mean(x^2) + eps) * weight (eps inside the sqrt).
- Rotary embeddings in the HF / paddlenlp layout: each attention owns a `rotary_emb` layer that
  caches cos / sin tables as non-persistable buffers (`cos_cached`, `sin_cached`
  [MAX_POS, head_dim], the angles concatenated [f | f]); q and k are rotated with rotate_half on
  the half-split layout (dims 0..3 pair with dims 4..7 of each head).
- Attention: separate q_proj / k_proj / v_proj / o_proj; tensors kept [B, T, heads, dim] until
  after the rotation; the kv heads are repeated with paddle.repeat_interleave (head h of the
  query uses kv head h // 2); an additive causal mask [B, 1, T, T] (-inf above the diagonal)
  built once in LlamaModel.forward and passed to every layer; softmax in float32.
- MLP: gate_proj, up_proj, down_proj; down(silu(gate(x)) * up(x)) with F.silu inline.

The torch side (port_llama_torch.py) was written independently, by hand, in Meta's reference
style (complex-number rope on interleaved pairs, fused w13). Its wq / wk rows are a per-head
permutation of this side's q_proj / k_proj columns (see port_llama_hook.py).

PADIFF_BUG=paddle_rms_eps plants this side's bug: every LlamaRMSNorm computes
x / (sqrt(mean(x^2)) + eps) * weight, with the eps outside the square root.
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, HIDDEN, HEADS, KV_HEADS, INTER, LAYERS = 96, 32, 4, 2, 64, 2
HEAD_DIM = HIDDEN // HEADS
EPS, ROPE_BASE, MAX_POS = 1e-5, 10000.0, 32
BATCH, SEQ = 2, 12
OWN_BUGS = {"paddle_rms_eps"}
OTHER_BUGS = {"kv_repeat_tile", "softmax_fp16"}


class LlamaRMSNorm(nn.Layer):
    def __init__(self, hidden_size, epsilon=EPS, eps_outside=False):
        super().__init__()
        self.weight = self.create_parameter(
            shape=[hidden_size], dtype="float32", default_initializer=nn.initializer.Constant(1.0))
        self.variance_epsilon = epsilon
        self.eps_outside = eps_outside

    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        if self.eps_outside:  # the bug
            hidden_states = hidden_states / (paddle.sqrt(variance) + self.variance_epsilon)
        else:
            hidden_states = paddle.rsqrt(variance + self.variance_epsilon) * hidden_states
        return hidden_states * self.weight


class LlamaRotaryEmbedding(nn.Layer):
    def __init__(self, dim, max_position_embeddings=MAX_POS, base=ROPE_BASE):
        super().__init__()
        inv_freq = 1.0 / (base ** (paddle.arange(0, dim, 2, dtype="float32") / dim))
        t = paddle.arange(max_position_embeddings, dtype="float32")
        freqs = paddle.einsum("i,j->ij", t, inv_freq)
        emb = paddle.concat([freqs, freqs], axis=-1)  # [max_pos, dim]
        self.register_buffer("cos_cached", emb.cos(), persistable=False)
        self.register_buffer("sin_cached", emb.sin(), persistable=False)

    def forward(self, x, seq_len):
        return self.cos_cached[:seq_len], self.sin_cached[:seq_len]


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return paddle.concat([-x2, x1], axis=-1)


def apply_rotary_pos_emb(q, k, cos, sin):
    cos = cos.unsqueeze([0, 2])  # [1, T, 1, dim]
    sin = sin.unsqueeze([0, 2])
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


class LlamaAttention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.num_heads, self.num_key_value_heads, self.head_dim = HEADS, KV_HEADS, HEAD_DIM
        self.num_key_value_groups = HEADS // KV_HEADS
        self.q_proj = nn.Linear(HIDDEN, HEADS * HEAD_DIM, bias_attr=False)
        self.k_proj = nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias_attr=False)
        self.v_proj = nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias_attr=False)
        self.o_proj = nn.Linear(HEADS * HEAD_DIM, HIDDEN, bias_attr=False)
        self.rotary_emb = LlamaRotaryEmbedding(HEAD_DIM)

    def forward(self, hidden_states, attention_mask):
        bsz, q_len, _ = hidden_states.shape
        q = self.q_proj(hidden_states).reshape([bsz, q_len, self.num_heads, self.head_dim])
        k = self.k_proj(hidden_states).reshape([bsz, q_len, self.num_key_value_heads, self.head_dim])
        v = self.v_proj(hidden_states).reshape([bsz, q_len, self.num_key_value_heads, self.head_dim])
        cos, sin = self.rotary_emb(v, seq_len=q_len)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        q, k, v = (z.transpose([0, 2, 1, 3]) for z in (q, k, v))  # [B, heads, T, dim]
        k = paddle.repeat_interleave(k, self.num_key_value_groups, axis=1)
        v = paddle.repeat_interleave(v, self.num_key_value_groups, axis=1)
        attn_weights = paddle.matmul(q, k, transpose_y=True) / math.sqrt(self.head_dim)
        attn_weights = attn_weights + attention_mask
        attn_weights = F.softmax(attn_weights, axis=-1, dtype="float32").astype(q.dtype)
        out = paddle.matmul(attn_weights, v).transpose([0, 2, 1, 3]).reshape([bsz, q_len, HIDDEN])
        return self.o_proj(out)


class LlamaMLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(HIDDEN, INTER, bias_attr=False)
        self.up_proj = nn.Linear(HIDDEN, INTER, bias_attr=False)
        self.down_proj = nn.Linear(INTER, HIDDEN, bias_attr=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Layer):
    def __init__(self, eps_outside=False):
        super().__init__()
        self.self_attn = LlamaAttention()
        self.mlp = LlamaMLP()
        self.input_layernorm = LlamaRMSNorm(HIDDEN, eps_outside=eps_outside)
        self.post_attention_layernorm = LlamaRMSNorm(HIDDEN, eps_outside=eps_outside)

    def forward(self, hidden_states, attention_mask):
        residual = hidden_states
        hidden_states = self.self_attn(self.input_layernorm(hidden_states), attention_mask)
        hidden_states = residual + hidden_states
        residual = hidden_states
        return residual + self.mlp(self.post_attention_layernorm(hidden_states))


class LlamaModel(nn.Layer):
    def __init__(self, eps_outside=False):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.LayerList([LlamaDecoderLayer(eps_outside) for _ in range(LAYERS)])
        self.norm = LlamaRMSNorm(HIDDEN, eps_outside=eps_outside)

    def forward(self, input_ids):
        bsz, seq_len = input_ids.shape
        causal = paddle.tril(paddle.ones([seq_len, seq_len], dtype="bool"))
        mask = paddle.where(causal, paddle.zeros([seq_len, seq_len]),
                            paddle.full([seq_len, seq_len], float("-inf")))
        mask = mask.unsqueeze([0, 1]).expand([bsz, 1, seq_len, seq_len])
        hidden_states = self.embed_tokens(input_ids)
        for layer in self.layers:
            hidden_states = layer(hidden_states, mask)
        return self.norm(hidden_states)


class LlamaForCausalLM(nn.Layer):
    def __init__(self, eps_outside=False):
        super().__init__()
        self.llama = LlamaModel(eps_outside)
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias_attr=False)

    def forward(self, input_ids):
        return self.lm_head(self.llama(input_ids))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_llama paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = LlamaForCausalLM(eps_outside=bug == "paddle_rms_eps")
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(7)
    return rng.integers(0, VOCAB, size=(BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [B, T, VOCAB] through lm_head (not an RMSNorm output itself)
    return (output**2).mean()
