"""Hand-written port, paddle side: a tiny ChatGLM2-style decoder LM (written by "person A").

Shared sizes: vocab 80, hidden 64, 4 query heads of 16, 2 key / value groups (multi-query
attention, each group serves 2 query heads: heads 0, 1 -> group 0, heads 2, 3 -> group 1),
SwiGLU FFN 128, 2 layers, pre-norm RMSNorm (eps 1e-5) and a final norm, untied output layer.
Rotary position embedding on ONLY the first half of each head's dimensions (8 of 16), in
INTERLEAVED pairs (x[0::2], x[1::2]): out[2i] = x[2i] cos - x[2i+1] sin, out[2i+1] = x[2i+1] cos
+ x[2i] sin, theta_i = pos / 10000^(2i / 8), i = 0..3; dimensions 8..15 pass through.
Attention: causal, softmax(q k^T / sqrt(16)).

Input: positional `input_ids` [2, 12] int64 (numpy rng seed 48). Output: logits [2, 12, 80].

Paddle idioms on this side (THUDM ChatGLM2 layout, sequence-first):
- root `ChatGLMForCausalLM` has one child `transformer` (`ChatGLMModel`), which registers
  `embedding` (a wrapper `Embedding` whose child `word_embeddings` is nn.Embedding; the wrapper
  transposes to [seq, batch, hidden]), `rotary_pos_emb` (`RotaryEmbedding`, a persistable
  `inv_freq` buffer; called ONCE per forward with the sequence length, returns the cache
  [seq, 1, 4, 2] of (cos, sin)), `encoder` (`GLMTransformer`: `layers` LayerList of `GLMBlock`,
  then `final_layernorm`) and `output_layer` Linear(64, 80, no bias). Every block works on
  [seq, batch, hidden]; the logits are transposed back to [batch, seq, vocab] in the root.
- `GLMBlock`: `input_layernorm`, `self_attention`, `post_attention_layernorm`, `mlp`.
- `SelfAttention`: ONE fused `query_key_value` Linear(64, 128) WITH bias, columns laid out
  [q: 4 heads x 16 | k: 2 groups x 16 | v: 2 groups x 16]; the rotary is the module-level
  function `apply_rotary_pos_emb` called inline; the groups are broadcast to the heads inline
  (unsqueeze + expand + reshape); then `core_attention` (`CoreAttention`: query-key layer scaling
  by the 1-based layer number, float32 softmax, causal mask from paddle.tril) and `dense`
  Linear(64, 64, no bias).
- `MLP`: fused `dense_h_to_4h` Linear(64, 256, no bias), columns [gate | up], SwiGLU inline
  (`swiglu`: chunk -> silu(gate) * up), `dense_4h_to_h` Linear(128, 64, no bias).
- `RMSNorm` hand-written (create_parameter): x * rsqrt(mean(x^2) + eps) * w.
- model() gives the norm weights, the qkv bias and the embedding trained-looking values (seeded).

The torch side (port_chatglm_torch.py) was written independently: batch-first, separate q / k / v
projections, a GPT-J-style rotary module with cos / sin buffers, SDPA with enable_gqa.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_rope_cache_bf16 -> RotaryEmbedding casts its (cos, sin) cache to bfloat16
                            unconditionally (the original's `if dtype == bfloat16: cache =
                            cache.bfloat16()` branch was ported without its dtype condition);
                            apply_rotary_pos_emb casts it back to float32; precision-level
  paddle_kv_tile         -> the key / value groups are broadcast to the heads with paddle.tile
                            (group order 0, 1, 0, 1) instead of unsqueeze + expand (0, 0, 1, 1)
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, HIDDEN, N_HEADS, N_GROUPS, HEAD_DIM, FFN, N_LAYERS = 80, 64, 4, 2, 16, 128, 2
EPS = 1e-5
BATCH, SEQ = 2, 12
OWN_BUGS = {"paddle_rope_cache_bf16", "paddle_kv_tile"}
OTHER_BUGS = {"torch_rope_cat_freqs", "torch_residual_post_ln"}


class RMSNorm(nn.Layer):
    def __init__(self, dim, eps=EPS):
        super().__init__()
        self.eps = eps
        self.weight = self.create_parameter([dim], default_initializer=nn.initializer.Constant(1.0))

    def forward(self, hidden_states):
        variance = hidden_states.astype("float32").pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * paddle.rsqrt(variance + self.eps)
        return self.weight * hidden_states


class RotaryEmbedding(nn.Layer):
    def __init__(self, dim, half_cache=False):
        super().__init__()
        self.dim = dim
        self.half_cache = half_cache
        inv_freq = 1.0 / (10000 ** (paddle.arange(0, dim, 2, dtype="float32") / dim))
        self.register_buffer("inv_freq", inv_freq)

    def forward(self, seq_len):
        seq_idx = paddle.arange(seq_len, dtype="float32")
        idx_theta = paddle.outer(seq_idx, self.inv_freq)  # [seq, dim / 2]
        cache = paddle.stack([paddle.cos(idx_theta), paddle.sin(idx_theta)], axis=-1)
        if self.half_cache:
            cache = cache.astype("bfloat16")
        return cache  # [seq, dim / 2, 2]


def apply_rotary_pos_emb(x, rope_cache):
    # x: [sq, b, np, hn], rope_cache: [sq, rot_dim / 2, 2]
    sq, b, np_, _hn = x.shape
    rot_dim = rope_cache.shape[-2] * 2
    x, x_pass = x[..., :rot_dim], x[..., rot_dim:]
    rope_cache = rope_cache[:sq].reshape([sq, 1, 1, rot_dim // 2, 2]).astype(x.dtype)
    xshaped = x.reshape([sq, b, np_, rot_dim // 2, 2])
    x_out2 = paddle.stack(
        [
            xshaped[..., 0] * rope_cache[..., 0] - xshaped[..., 1] * rope_cache[..., 1],
            xshaped[..., 1] * rope_cache[..., 0] + xshaped[..., 0] * rope_cache[..., 1],
        ],
        axis=-1,
    )
    x_out2 = x_out2.flatten(3)
    return paddle.concat([x_out2, x_pass], axis=-1)


class CoreAttention(nn.Layer):
    def __init__(self, layer_number):
        super().__init__()
        self.layer_number = max(1, layer_number)
        self.hidden_size_per_partition = N_HEADS * HEAD_DIM
        self.norm_factor = math.sqrt(HEAD_DIM) * self.layer_number

    def forward(self, query_layer, key_layer, value_layer):
        # [sq, b, np, hn] -> [b, np, sq, hn]
        q = query_layer.transpose([1, 2, 0, 3])
        k = key_layer.transpose([1, 2, 0, 3])
        v = value_layer.transpose([1, 2, 0, 3])
        scores = paddle.matmul(q, k, transpose_y=True) * (1.0 / self.norm_factor)
        scores = scores.astype("float32") * self.layer_number
        sq, sk = scores.shape[-2], scores.shape[-1]
        causal = paddle.tril(paddle.ones([sq, sk], dtype="bool"))
        scores = paddle.where(causal, scores, paddle.full_like(scores, float("-inf")))
        probs = F.softmax(scores, axis=-1).astype(v.dtype)
        context = paddle.matmul(probs, v)  # [b, np, sq, hn]
        context = context.transpose([2, 0, 1, 3])
        return context.reshape([context.shape[0], context.shape[1], self.hidden_size_per_partition])


class SelfAttention(nn.Layer):
    def __init__(self, layer_number, kv_tile=False):
        super().__init__()
        self.kv_tile = kv_tile
        self.qkv_hidden_size = N_HEADS * HEAD_DIM + 2 * N_GROUPS * HEAD_DIM
        self.query_key_value = nn.Linear(HIDDEN, self.qkv_hidden_size)
        self.core_attention = CoreAttention(layer_number)
        self.dense = nn.Linear(N_HEADS * HEAD_DIM, HIDDEN, bias_attr=False)

    def forward(self, hidden_states, rotary_pos_emb):
        # hidden_states: [sq, b, h]
        mixed = self.query_key_value(hidden_states)
        q_size, kv_size = N_HEADS * HEAD_DIM, N_GROUPS * HEAD_DIM
        query_layer, key_layer, value_layer = paddle.split(mixed, [q_size, kv_size, kv_size], axis=-1)
        sq, b = query_layer.shape[0], query_layer.shape[1]
        query_layer = query_layer.reshape([sq, b, N_HEADS, HEAD_DIM])
        key_layer = key_layer.reshape([sq, b, N_GROUPS, HEAD_DIM])
        value_layer = value_layer.reshape([sq, b, N_GROUPS, HEAD_DIM])

        query_layer = apply_rotary_pos_emb(query_layer, rotary_pos_emb)
        key_layer = apply_rotary_pos_emb(key_layer, rotary_pos_emb)

        rep = N_HEADS // N_GROUPS
        if self.kv_tile:
            key_layer = paddle.tile(key_layer, [1, 1, rep, 1])
            value_layer = paddle.tile(value_layer, [1, 1, rep, 1])
        else:
            key_layer = key_layer.unsqueeze(-2).expand([sq, b, N_GROUPS, rep, HEAD_DIM])
            key_layer = key_layer.reshape([sq, b, N_HEADS, HEAD_DIM])
            value_layer = value_layer.unsqueeze(-2).expand([sq, b, N_GROUPS, rep, HEAD_DIM])
            value_layer = value_layer.reshape([sq, b, N_HEADS, HEAD_DIM])

        context_layer = self.core_attention(query_layer, key_layer, value_layer)
        return self.dense(context_layer)


def swiglu(x):
    x = paddle.chunk(x, 2, axis=-1)
    return F.silu(x[0]) * x[1]


class MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.dense_h_to_4h = nn.Linear(HIDDEN, FFN * 2, bias_attr=False)
        self.dense_4h_to_h = nn.Linear(FFN, HIDDEN, bias_attr=False)

    def forward(self, hidden_states):
        intermediate_parallel = swiglu(self.dense_h_to_4h(hidden_states))
        return self.dense_4h_to_h(intermediate_parallel)


class GLMBlock(nn.Layer):
    def __init__(self, layer_number, kv_tile=False):
        super().__init__()
        self.layer_number = layer_number
        self.input_layernorm = RMSNorm(HIDDEN)
        self.self_attention = SelfAttention(layer_number, kv_tile)
        self.post_attention_layernorm = RMSNorm(HIDDEN)
        self.mlp = MLP()

    def forward(self, hidden_states, rotary_pos_emb):
        layernorm_output = self.input_layernorm(hidden_states)
        attention_output = self.self_attention(layernorm_output, rotary_pos_emb)
        residual = hidden_states
        layernorm_input = residual + attention_output
        layernorm_output = self.post_attention_layernorm(layernorm_input)
        mlp_output = self.mlp(layernorm_output)
        return layernorm_input + mlp_output


class GLMTransformer(nn.Layer):
    def __init__(self, kv_tile=False):
        super().__init__()
        self.layers = nn.LayerList([GLMBlock(i + 1, kv_tile) for i in range(N_LAYERS)])
        self.final_layernorm = RMSNorm(HIDDEN)

    def forward(self, hidden_states, rotary_pos_emb):
        for layer in self.layers:
            hidden_states = layer(hidden_states, rotary_pos_emb)
        return self.final_layernorm(hidden_states)


class Embedding(nn.Layer):
    def __init__(self):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB, HIDDEN)

    def forward(self, input_ids):
        embeddings = self.word_embeddings(input_ids)  # [b, s, h]
        return embeddings.transpose([1, 0, 2])  # [s, b, h]


class ChatGLMModel(nn.Layer):
    def __init__(self, half_cache=False, kv_tile=False):
        super().__init__()
        self.embedding = Embedding()
        self.rotary_pos_emb = RotaryEmbedding(HEAD_DIM // 2, half_cache)
        self.encoder = GLMTransformer(kv_tile)
        self.output_layer = nn.Linear(HIDDEN, VOCAB, bias_attr=False)

    def forward(self, input_ids):
        seq_length = input_ids.shape[1]
        inputs_embeds = self.embedding(input_ids)
        rotary_pos_emb = self.rotary_pos_emb(seq_length)
        hidden_states = self.encoder(inputs_embeds, rotary_pos_emb)
        return self.output_layer(hidden_states)  # [s, b, v]


class ChatGLMForCausalLM(nn.Layer):
    def __init__(self, half_cache=False, kv_tile=False):
        super().__init__()
        self.transformer = ChatGLMModel(half_cache, kv_tile)

    def forward(self, input_ids):
        lm_logits = self.transformer(input_ids)
        return lm_logits.transpose([1, 0, 2])  # [b, s, v]


def _trained_look(m):
    rng = np.random.default_rng(148)
    t = m.transformer
    t.embedding.word_embeddings.weight.set_value(rng.normal(0.0, 0.6, (VOCAB, HIDDEN)).astype("float32"))
    for _name, layer in m.named_sublayers():
        if isinstance(layer, RMSNorm):
            layer.weight.set_value(rng.uniform(0.6, 1.4, HIDDEN).astype("float32"))
        if isinstance(layer, SelfAttention):
            b = layer.query_key_value.bias
            b.set_value(rng.normal(0.0, 0.2, b.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_chatglm paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = ChatGLMForCausalLM(half_cache=bug == "paddle_rope_cache_bf16", kv_tile=bug == "paddle_kv_tile")
    _trained_look(m)
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(48)
    return rng.integers(0, VOCAB, size=(BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 12, 80]
    return (output**2).mean()
