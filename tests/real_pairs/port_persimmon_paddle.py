"""Hand-written port, paddle side: a tiny Persimmon (Adept persimmon-8b / Fuyu decoder) LM (written by "person A").

Input: positional `input_ids` [2, 12] int64 (numpy rng seed 71, vocab 64). Output: logits
[2, 12, 64]. Vocab 64, width 32, 4 heads of 8, 2 layers, MLP hidden 128 with squared ReLU,
LayerNorm eps 1e-5 everywhere, biases on every Linear except the LM head (untied).

One layer (pre-norm):  h = h + self_attn(input_layernorm(h));  h = h + mlp(post_attention_layernorm(h))
Attention (HF `PersimmonAttention`):
  fused = query_key_value(h) [B, L, 96], laid out HEAD BY HEAD: [B, L, H, 3, D] (per head q | k | v)
  q = q_layernorm(q), k = k_layernorm(k)     (LayerNorm over the 8 features of each head, affine)
  PARTIAL rotary (partial_rotary_factor 0.5): only features 0:4 of each head are rotated,
  rotate-half pairing (0, 2), (1, 3), theta 25000; features 4:8 pass through
  softmax(q k^T / sqrt(8) + causal) v, dense
MLP: dense_4h_to_h(relu(dense_h_to_4h(x)) ** 2).

Paddle idioms on this side (the HF checkpoint's names):
- root `PersimmonForCausalLM`: `model` (PersimmonModel), `lm_head` (no bias).
- `PersimmonModel`: `embed_tokens`, `layers` (LayerList, iterated), `final_layernorm`; the
  additive causal mask [1, 1, L, L] (-inf above the diagonal) and the position ids are built in
  THIS forward and passed to every layer.
- `PersimmonDecoderLayer`: `self_attn`, `mlp`, `input_layernorm`, `post_attention_layernorm`.
- `PersimmonAttention`: ONE fused `query_key_value` Linear(32, 96) (head-by-head layout),
  `dense`, `q_layernorm`, `k_layernorm` (nn.LayerNorm(8)), and `rotary_emb`
  (`PersimmonRotaryEmbedding`, a module of its own with a non-persistable `inv_freq` buffer
  [2]; its forward returns the cos / sin tables [L, 4], gathered at the position ids).
- `PersimmonMLP`: `dense_h_to_4h`, `dense_4h_to_h`, `act` (a `ReLUSquaredActivation` module).
- model() gives the LayerNorm weights U(0.6, 1.4) / biases N(0, 0.1), the Linear biases
  N(0, 0.05), the embedding N(0, 0.5), and small q / k weights (so that the per-head q / k
  variance is small before the qk-layernorm) (seeded), so that nothing is an identity.

The torch side (port_persimmon_torch.py) was written independently: separate q / k / v Linears,
the rotary tables computed inline in the attention from its own `inv_freq` buffer (cos / sin of
width 2, applied to the two halves of the rotated features), F.scaled_dot_product_attention with
is_causal, and the squared ReLU inline in the MLP.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_rope_theta_default -> `rotary_emb` is built with the LLaMA default base 10000 instead of
                               Persimmon's rope_theta 25000 (inv_freq [1, 0.01] instead of
                               [1, 0.00632]), in both layers
  paddle_qk_norm_after_rope -> the attention applies the partial rotary first and the
                               q / k layernorms after it (the order of two blocks of lines
                               swapped), in both layers
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, HIDDEN, N_HEADS, N_LAYERS, INTERMEDIATE = 64, 32, 4, 2, 128
HEAD_DIM = HIDDEN // N_HEADS
PARTIAL_ROTARY_FACTOR = 0.5
ROPE_THETA = 25000.0
LN_EPS = 1e-5
BATCH, SEQ = 2, 12
OWN_BUGS = {"paddle_rope_theta_default", "paddle_qk_norm_after_rope"}
OTHER_BUGS = {"torch_relu_not_squared", "torch_qk_norm_eps"}


class PersimmonRotaryEmbedding(nn.Layer):
    def __init__(self, dim, base=ROPE_THETA):
        super().__init__()
        self.dim = dim
        self.base = base
        inv_freq = 1.0 / (base ** (paddle.arange(0, dim, 2, dtype="float32") / dim))
        self.register_buffer("inv_freq", inv_freq, persistable=False)

    def forward(self, x, position_ids):
        # x only gives the dtype; position_ids [L]
        freqs = paddle.outer(position_ids.astype("float32"), self.inv_freq)  # [L, dim / 2]
        emb = paddle.concat([freqs, freqs], axis=-1)  # [L, dim]
        return emb.cos().astype(x.dtype), emb.sin().astype(x.dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return paddle.concat([-x2, x1], axis=-1)


def apply_rotary_pos_emb(q, k, cos, sin):
    cos, sin = cos[None, None], sin[None, None]  # [1, 1, L, dim]
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


class ReLUSquaredActivation(nn.Layer):
    def forward(self, input):
        return paddle.square(F.relu(input))


class PersimmonMLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.dense_h_to_4h = nn.Linear(HIDDEN, INTERMEDIATE)
        self.dense_4h_to_h = nn.Linear(INTERMEDIATE, HIDDEN)
        self.act = ReLUSquaredActivation()

    def forward(self, hidden_states):
        hidden_states = self.dense_h_to_4h(hidden_states)
        hidden_states = self.act(hidden_states)
        return self.dense_4h_to_h(hidden_states)


class PersimmonAttention(nn.Layer):
    def __init__(self, rope_base=ROPE_THETA, norm_after_rope=False):
        super().__init__()
        self.hidden_size = HIDDEN
        self.num_heads = N_HEADS
        self.head_dim = HEAD_DIM
        self.rotary_ndims = int(self.head_dim * PARTIAL_ROTARY_FACTOR)
        self.norm_after_rope = norm_after_rope
        self.query_key_value = nn.Linear(self.hidden_size, 3 * self.hidden_size)
        self.dense = nn.Linear(self.num_heads * self.head_dim, self.hidden_size)
        self.q_layernorm = nn.LayerNorm(self.head_dim, epsilon=LN_EPS)
        self.k_layernorm = nn.LayerNorm(self.head_dim, epsilon=LN_EPS)
        self.rotary_emb = PersimmonRotaryEmbedding(self.rotary_ndims, base=rope_base)

    def _split_heads(self, fused_qkv):
        batch_size, seq_length, _ = fused_qkv.shape
        fused_qkv = fused_qkv.reshape([batch_size, seq_length, self.num_heads, 3, self.head_dim])
        return fused_qkv[..., 0, :], fused_qkv[..., 1, :], fused_qkv[..., 2, :]

    def _rope(self, query_states, key_states, cos, sin):
        query_rot, query_pass = query_states[..., : self.rotary_ndims], query_states[..., self.rotary_ndims :]
        key_rot, key_pass = key_states[..., : self.rotary_ndims], key_states[..., self.rotary_ndims :]
        query_rot, key_rot = apply_rotary_pos_emb(query_rot, key_rot, cos, sin)
        return paddle.concat([query_rot, query_pass], axis=-1), paddle.concat([key_rot, key_pass], axis=-1)

    def forward(self, hidden_states, attention_mask, position_ids):
        bsz, q_len, _ = hidden_states.shape
        fused_qkv = self.query_key_value(hidden_states)
        query_states, key_states, value_states = self._split_heads(fused_qkv)  # [B, L, H, D]
        cos, sin = self.rotary_emb(value_states, position_ids)
        if self.norm_after_rope:
            query_states = query_states.transpose([0, 2, 1, 3])
            key_states = key_states.transpose([0, 2, 1, 3])
            query_states, key_states = self._rope(query_states, key_states, cos, sin)
            query_states = self.q_layernorm(query_states)
            key_states = self.k_layernorm(key_states)
        else:
            query_states = self.q_layernorm(query_states)
            key_states = self.k_layernorm(key_states)
            query_states = query_states.transpose([0, 2, 1, 3])  # [B, H, L, D]
            key_states = key_states.transpose([0, 2, 1, 3])
            query_states, key_states = self._rope(query_states, key_states, cos, sin)
        value_states = value_states.transpose([0, 2, 1, 3])

        attn_weights = paddle.matmul(query_states, key_states, transpose_y=True) / math.sqrt(self.head_dim)
        attn_weights = attn_weights + attention_mask
        attn_weights = F.softmax(attn_weights.astype("float32"), axis=-1).astype(query_states.dtype)
        attn_output = paddle.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose([0, 2, 1, 3]).reshape([bsz, q_len, self.hidden_size])
        return self.dense(attn_output)


class PersimmonDecoderLayer(nn.Layer):
    def __init__(self, rope_base=ROPE_THETA, norm_after_rope=False):
        super().__init__()
        self.self_attn = PersimmonAttention(rope_base, norm_after_rope)
        self.mlp = PersimmonMLP()
        self.input_layernorm = nn.LayerNorm(HIDDEN, epsilon=LN_EPS)
        self.post_attention_layernorm = nn.LayerNorm(HIDDEN, epsilon=LN_EPS)

    def forward(self, hidden_states, attention_mask, position_ids):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = residual + self.self_attn(hidden_states, attention_mask, position_ids)
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        return residual + self.mlp(hidden_states)


class PersimmonModel(nn.Layer):
    def __init__(self, rope_base=ROPE_THETA, norm_after_rope=False):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.LayerList([PersimmonDecoderLayer(rope_base, norm_after_rope) for _ in range(N_LAYERS)])
        self.final_layernorm = nn.LayerNorm(HIDDEN, epsilon=LN_EPS)

    def forward(self, input_ids):
        seq_length = input_ids.shape[1]
        hidden_states = self.embed_tokens(input_ids)
        position_ids = paddle.arange(seq_length, dtype="int64")
        causal_mask = paddle.triu(paddle.full([seq_length, seq_length], float("-inf"), dtype="float32"), diagonal=1)
        causal_mask = causal_mask.reshape([1, 1, seq_length, seq_length])
        for decoder_layer in self.layers:
            hidden_states = decoder_layer(hidden_states, causal_mask, position_ids)
        return self.final_layernorm(hidden_states)


class PersimmonForCausalLM(nn.Layer):
    def __init__(self, rope_base=ROPE_THETA, norm_after_rope=False):
        super().__init__()
        self.model = PersimmonModel(rope_base, norm_after_rope)
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias_attr=False)

    def forward(self, input_ids):
        return self.lm_head(self.model(input_ids))


def _trained_look(m):
    rng = np.random.default_rng(73)

    def put(p, arr):
        p.set_value(np.asarray(arr, dtype="float32").reshape(p.shape))

    put(m.model.embed_tokens.weight, rng.normal(0.0, 0.5, (VOCAB, HIDDEN)))
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            put(layer.weight, rng.uniform(0.6, 1.4, layer.weight.shape))
            put(layer.bias, rng.normal(0.0, 0.1, layer.bias.shape))
        elif isinstance(layer, nn.Linear) and layer.bias is not None:
            put(layer.bias, rng.normal(0.0, 0.05, layer.bias.shape))
        if isinstance(layer, PersimmonAttention):
            # small q / k before the per-head layernorm (its eps matters); v keeps its scale
            w = layer.query_key_value.weight.numpy().reshape([HIDDEN, N_HEADS, 3, HEAD_DIM]).copy()
            w[:, :, :2] *= 0.08
            put(layer.query_key_value.weight, w)
            b = layer.query_key_value.bias.numpy().reshape([N_HEADS, 3, HEAD_DIM]).copy()
            b[:, :2] *= 0.2
            put(layer.query_key_value.bias, b)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_persimmon paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = PersimmonForCausalLM(
        rope_base=10000.0 if bug == "paddle_rope_theta_default" else ROPE_THETA,
        norm_after_rope=bug == "paddle_qk_norm_after_rope",
    )
    _trained_look(m)
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(71)
    return rng.integers(0, VOCAB, size=(BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 12, 64]
    return (output**2).mean()
