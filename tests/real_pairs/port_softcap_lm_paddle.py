"""Hand-written port, paddle side: a tiny Gemma-2 style causal LM with logit soft-capping (written by "person A").

Sizes: vocab 64, hidden 32, 2 decoder layers, grouped-query attention with 4 query heads and
2 key/value heads of 8 (query head h uses kv head h // 2), GeGLU MLP hidden 64, sequence length
12, batch 2. Input: positional `input_ids` [2, 12] int64 (numpy rng seed 74). Output: logits
[2, 12, 64].

Gemma-2 math:
- h = embed(ids) * sqrt(32);
- layer i (i even: sliding window of 4 keys, j in (q - 4, q]; i odd: global causal):
    h = h + post_attention_layernorm(attn(input_layernorm(h)))
    h = h + post_feedforward_layernorm(mlp(pre_feedforward_layernorm(h)))
- attention: rotary embeddings (theta 10000, "rotate_half" layout: dims i and i + 4 form a pair),
  scores = q.k / sqrt(8), then SOFT-CAPPED: 4 * tanh(scores / 4), then the mask, softmax, @ v;
- GeGLU: down(gelu_tanh(gate(x)) * up(x));
- final RMSNorm, tied head logits = h . E^T, then final soft-capping 5 * tanh(logits / 5).
- RMSNorm (eps 1e-6) in the Gemma form: x / sqrt(mean(x^2) + eps) * (1 + w), with w stored.
The soft-caps are small (4 and 5, Gemma-2 uses 50 and 30) so that they bite in a model this small.

Paddle idioms on this side (PaddleNLP / HF Gemma2 layout):
- root `Gemma2ForCausalLM`: `model` (`Gemma2Model`) and `lm_head` (`TiedLMHead`, a Layer whose
  `weight` IS the embedding parameter: named_parameters lists it once, as
  model.embed_tokens.weight; it computes matmul(h, weight, transpose_y=True)). The final
  soft-capping is inline in the root forward.
- `Gemma2Model`: `embed_tokens` (nn.Embedding, its output scaled by sqrt(32) inline), `layers`
  (LayerList), `norm`, `rotary_emb` (`Gemma2RotaryEmbedding`, a non-persistable `inv_freq`
  buffer; called ONCE per forward with (h, position_ids) and returning (cos, sin) [B, L, 8],
  which every layer receives as extra arguments).
- `Gemma2DecoderLayer` registers `self_attn`, `mlp`, then the four norms `input_layernorm`,
  `post_attention_layernorm`, `pre_feedforward_layernorm`, `post_feedforward_layernorm`.
- `Gemma2Attention`: `q_proj` (32 -> 32), `k_proj` / `v_proj` (32 -> 16), `o_proj`, no biases;
  rotate_half rotary; kv heads expanded with paddle.repeat_interleave(2, axis=1); the causal /
  sliding mask is built inline with paddle.tril / paddle.triu and applied with paddle.where(-inf).
- `Gemma2MLP`: separate `gate_proj` / `up_proj` (32 -> 64) and `down_proj`, F.gelu(approximate=True)
  inline.
- `Gemma2RMSNorm`: hand-written, create_parameter weight (the stored w, Gemma form 1 + w).
- model() gives the embedding Normal(0, 0.3), the norm weights trained-looking values
  Normal(0, 0.15) (so 1 + w is NOT 1) and scales q_proj / k_proj up by 1.5 (sharper attention,
  so the attention soft-cap bites), all seeded.

The torch side (port_softcap_lm_torch.py) was written independently: nn.RMSNorm holding 1 + w,
a scaled-embedding module, ONE fused qkv Linear with the q / k rows in the interleaved
(GPT-J / Meta) rotary layout and rotary cos / sin buffers inside each attention, a fused
gate|up Linear, grouped-query attention by reshaping the query heads into groups, and an inline
F.linear head on the embedding.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_norm_no_plus_one -> Gemma2RMSNorm multiplies by w instead of (1 + w), in every norm
  paddle_rope_bf16        -> the rotary module computes its angles position * inv_freq in
                             bfloat16 (both factors cast to bfloat16, the product cast back to
                             float32 before cos / sin): precision-level
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, HIDDEN, LAYERS = 64, 32, 2
HEADS, KV_HEADS, HEAD_DIM, INTER = 4, 2, 8, 64
WINDOW, ATTN_CAP, FINAL_CAP = 4, 4.0, 5.0
ROPE_THETA, EPS = 10000.0, 1e-6
BATCH, SEQ = 2, 12
OWN_BUGS = {"paddle_norm_no_plus_one", "paddle_rope_bf16"}
OTHER_BUGS = {"torch_mask_before_softcap", "torch_post_norm_after_residual"}


class Gemma2RMSNorm(nn.Layer):
    def __init__(self, dim, eps=EPS, plus_one=True):
        super().__init__()
        self.eps = eps
        self.plus_one = plus_one
        self.weight = self.create_parameter([dim], default_initializer=nn.initializer.Constant(0.0))

    def forward(self, x):
        normed = x * paddle.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        scale = 1.0 + self.weight if self.plus_one else self.weight
        return normed * scale


class Gemma2RotaryEmbedding(nn.Layer):
    def __init__(self, dim, base=ROPE_THETA, bf16=False):
        super().__init__()
        self.bf16 = bf16
        inv_freq = 1.0 / (base ** (np.arange(0, dim, 2, dtype="float64") / dim))
        self.register_buffer("inv_freq", paddle.to_tensor(inv_freq.astype("float32")), persistable=False)

    def forward(self, x, position_ids):
        pos = position_ids.astype("float32").unsqueeze(-1)  # [B, L, 1]
        inv = self.inv_freq.reshape([1, 1, -1])
        if self.bf16:
            freqs = (pos.astype("bfloat16") * inv.astype("bfloat16")).astype("float32")
        else:
            freqs = pos * inv  # [B, L, 4]
        emb = paddle.concat([freqs, freqs], axis=-1)
        return paddle.cos(emb).astype(x.dtype), paddle.sin(emb).astype(x.dtype)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return paddle.concat([-x2, x1], axis=-1)


class Gemma2Attention(nn.Layer):
    def __init__(self, layer_idx):
        super().__init__()
        self.sliding_window = WINDOW if layer_idx % 2 == 0 else None
        self.scaling = HEAD_DIM**-0.5
        self.q_proj = nn.Linear(HIDDEN, HEADS * HEAD_DIM, bias_attr=False)
        self.k_proj = nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias_attr=False)
        self.v_proj = nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias_attr=False)
        self.o_proj = nn.Linear(HEADS * HEAD_DIM, HIDDEN, bias_attr=False)

    def forward(self, hidden_states, cos, sin):
        b, seq, _ = hidden_states.shape
        q = self.q_proj(hidden_states).reshape([b, seq, HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])
        k = self.k_proj(hidden_states).reshape([b, seq, KV_HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])
        v = self.v_proj(hidden_states).reshape([b, seq, KV_HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = paddle.repeat_interleave(k, HEADS // KV_HEADS, axis=1)
        v = paddle.repeat_interleave(v, HEADS // KV_HEADS, axis=1)
        scores = paddle.matmul(q, k, transpose_y=True) * self.scaling
        scores = paddle.tanh(scores / ATTN_CAP) * ATTN_CAP
        ones = paddle.ones([seq, seq], dtype="float32")
        allowed = paddle.tril(ones)
        if self.sliding_window is not None:
            allowed = allowed * paddle.triu(ones, diagonal=-(self.sliding_window - 1))
        scores = paddle.where(allowed.astype("bool"), scores, paddle.full_like(scores, float("-inf")))
        probs = F.softmax(scores.astype("float32"), axis=-1)
        out = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([b, seq, HEADS * HEAD_DIM])
        return self.o_proj(out)


class Gemma2MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(HIDDEN, INTER, bias_attr=False)
        self.up_proj = nn.Linear(HIDDEN, INTER, bias_attr=False)
        self.down_proj = nn.Linear(INTER, HIDDEN, bias_attr=False)

    def forward(self, x):
        return self.down_proj(F.gelu(self.gate_proj(x), approximate=True) * self.up_proj(x))


class Gemma2DecoderLayer(nn.Layer):
    def __init__(self, layer_idx, plus_one=True):
        super().__init__()
        self.self_attn = Gemma2Attention(layer_idx)
        self.mlp = Gemma2MLP()
        self.input_layernorm = Gemma2RMSNorm(HIDDEN, plus_one=plus_one)
        self.post_attention_layernorm = Gemma2RMSNorm(HIDDEN, plus_one=plus_one)
        self.pre_feedforward_layernorm = Gemma2RMSNorm(HIDDEN, plus_one=plus_one)
        self.post_feedforward_layernorm = Gemma2RMSNorm(HIDDEN, plus_one=plus_one)

    def forward(self, hidden_states, cos, sin):
        residual = hidden_states
        hidden_states = self.self_attn(self.input_layernorm(hidden_states), cos, sin)
        hidden_states = residual + self.post_attention_layernorm(hidden_states)
        residual = hidden_states
        hidden_states = self.mlp(self.pre_feedforward_layernorm(hidden_states))
        return residual + self.post_feedforward_layernorm(hidden_states)


class Gemma2Model(nn.Layer):
    def __init__(self, plus_one=True, rope_bf16=False):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN, weight_attr=nn.initializer.Normal(0.0, 0.3))
        self.layers = nn.LayerList([Gemma2DecoderLayer(i, plus_one) for i in range(LAYERS)])
        self.norm = Gemma2RMSNorm(HIDDEN, plus_one=plus_one)
        self.rotary_emb = Gemma2RotaryEmbedding(HEAD_DIM, bf16=rope_bf16)

    def forward(self, input_ids):
        b, seq = input_ids.shape
        h = self.embed_tokens(input_ids)
        h = h * paddle.to_tensor(HIDDEN**0.5, dtype=h.dtype)
        position_ids = paddle.arange(seq, dtype="int64").unsqueeze(0).expand([b, seq])
        cos, sin = self.rotary_emb(h, position_ids)
        for layer in self.layers:
            h = layer(h, cos, sin)
        return self.norm(h)


class TiedLMHead(nn.Layer):
    def __init__(self, embedding_weight):
        super().__init__()
        self.weight = embedding_weight  # the same Parameter object: tied

    def forward(self, hidden_states):
        return paddle.matmul(hidden_states, self.weight, transpose_y=True)


class Gemma2ForCausalLM(nn.Layer):
    def __init__(self, plus_one=True, rope_bf16=False):
        super().__init__()
        self.model = Gemma2Model(plus_one, rope_bf16)
        self.lm_head = TiedLMHead(self.model.embed_tokens.weight)

    def forward(self, input_ids):
        logits = self.lm_head(self.model(input_ids))
        return paddle.tanh(logits / FINAL_CAP) * FINAL_CAP


def _trained_look(m):
    rng = np.random.default_rng(2024)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, Gemma2RMSNorm):
            layer.weight.set_value(rng.normal(0.0, 0.15, HIDDEN).astype("float32"))
        if isinstance(layer, Gemma2Attention):
            for lin in (layer.q_proj, layer.k_proj):
                lin.weight.set_value(lin.weight.numpy() * 1.5)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_softcap_lm paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = Gemma2ForCausalLM(plus_one=bug != "paddle_norm_no_plus_one", rope_bf16=bug == "paddle_rope_bf16")
    _trained_look(m)
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(74)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # soft-capped logits [2, 12, 64]
    return (output**2).mean()
