"""Hand-written port, paddle side: a tiny MiniCPM-style decoder LM (written by "person A").

Sizes: vocab 64, hidden 32, 4 heads of 8 (no GQA), SwiGLU intermediate 48, 2 layers, sequence
length 10, batch 2. MiniCPM's "muP" scalings:
  - token embeddings are multiplied by scale_emb = 12;
  - every residual branch (attention and MLP) is multiplied by scale_depth / sqrt(num_layers)
    = 1.4 / sqrt(2) before it is added back;
  - the LM head is TIED to the embedding and its input is divided by hidden / dim_model_base
    = 32 / 8 = 4.
RMSNorm eps 1e-5 (pre-norm blocks plus a final norm); rotary embeddings (base 10000) on the whole
head dim, HALF-SPLIT pairs (rotate_half: dim i pairs with dim i + 4); causal softmax attention.
Output: logits [2, 10, 64].

Paddle idioms on this side (HF MiniCPM layout):
- root `MiniCPMForCausalLM`: `model` (`MiniCPMModel`); NO head module, the tied head is
  `paddle.matmul(h / (hidden / dim_model_base), model.embed_tokens.weight, transpose_y=True)`
  inline in the root forward.
- `MiniCPMModel`: `embed_tokens` (a plain nn.Embedding), `layers` (LayerList), `norm`. The
  scale_emb multiplication is INLINE in MiniCPMModel.forward, just after the embedding call.
- `MiniCPMDecoderLayer` registers `self_attn`, `mlp`, `input_layernorm`,
  `post_attention_layernorm`, and keeps `scale_depth` / `num_hidden_layers` as plain Python
  attributes: the residual scale is computed inline in its forward.
- `MiniCPMAttention`: separate `q_proj` / `k_proj` / `v_proj` / `o_proj` Linear(32, 32, no
  bias), then a `rotary_emb` child (`MiniCPMRotaryEmbedding`) that builds cos / sin from the
  sequence length and ROTATES q and k itself (called with q, k, returns q, k); causal mask with
  paddle.triu + paddle.where; F.softmax.
- `MiniCPMMLP`: `gate_proj`, `up_proj`, `down_proj`; F.silu inline.
- `MiniCPMRMSNorm`: create_parameter `weight`, x * rsqrt(mean(x^2) + eps) * weight.
- model() gives the embedding Normal(0, 0.05) and the norm weights trained-looking values
  (Normal(1, 0.15), rng seed 31).

The torch side (port_minicpm_torch.py) was written independently: an embedding module that scales
itself, a fused qkv with interleaved rotary pairs, a fused up|gate Linear, the residual scale in a
small buffer-holding module, and a real (weight-sharing) lm_head module.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_depth_scale_linear -> the decoder layer's residual scale is scale_depth / num_layers
                               (0.7) instead of scale_depth / sqrt(num_layers) (0.99)
  paddle_rope_fp16_cache    -> the rotary module builds its cos / sin table in float16 (as the
                               HF code does for a half-precision model) and casts it back to
                               float32: precision-level
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, HIDDEN, N_HEADS, INTERMEDIATE, N_LAYERS = 64, 32, 4, 48, 2
HEAD_DIM = HIDDEN // N_HEADS
SCALE_EMB, SCALE_DEPTH, DIM_MODEL_BASE = 12.0, 1.4, 8
ROPE_THETA, RMS_EPS = 10000.0, 1e-5
BATCH, SEQ = 2, 10
OWN_BUGS = {"paddle_depth_scale_linear", "paddle_rope_fp16_cache"}
OTHER_BUGS = {"torch_emb_scale_sqrt_hidden", "torch_rmsnorm_variance"}


class MiniCPMRMSNorm(nn.Layer):
    def __init__(self, hidden_size, eps=RMS_EPS):
        super().__init__()
        self.variance_epsilon = eps
        self.weight = self.create_parameter([hidden_size], default_initializer=nn.initializer.Constant(1.0))

    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        return hidden_states * paddle.rsqrt(variance + self.variance_epsilon) * self.weight


def rotate_half(x):
    x1, x2 = x.chunk(2, axis=-1)
    return paddle.concat([-x2, x1], axis=-1)


class MiniCPMRotaryEmbedding(nn.Layer):
    """Builds cos / sin for the current length and applies them to q and k ([B, H, L, D])."""

    def __init__(self, dim, base=ROPE_THETA, cache_dtype="float32"):
        super().__init__()
        self.dim, self.base, self.cache_dtype = dim, base, cache_dtype

    def forward(self, q, k):
        seq_len = q.shape[2]
        inv_freq = 1.0 / (self.base ** (paddle.arange(0, self.dim, 2, dtype="float32") / self.dim))
        t = paddle.arange(seq_len, dtype="float32")
        freqs = paddle.outer(t, inv_freq)
        emb = paddle.concat([freqs, freqs], axis=-1)
        cos = emb.cos().astype(self.cache_dtype).astype(q.dtype)
        sin = emb.sin().astype(self.cache_dtype).astype(q.dtype)
        q_embed = q * cos + rotate_half(q) * sin
        k_embed = k * cos + rotate_half(k) * sin
        return q_embed, k_embed


class MiniCPMAttention(nn.Layer):
    def __init__(self, rope_cache_dtype="float32"):
        super().__init__()
        self.num_heads, self.head_dim = N_HEADS, HEAD_DIM
        self.q_proj = nn.Linear(HIDDEN, HIDDEN, bias_attr=False)
        self.k_proj = nn.Linear(HIDDEN, HIDDEN, bias_attr=False)
        self.v_proj = nn.Linear(HIDDEN, HIDDEN, bias_attr=False)
        self.o_proj = nn.Linear(HIDDEN, HIDDEN, bias_attr=False)
        self.rotary_emb = MiniCPMRotaryEmbedding(HEAD_DIM, cache_dtype=rope_cache_dtype)

    def forward(self, hidden_states):
        bsz, q_len, _ = hidden_states.shape
        shape = [bsz, q_len, self.num_heads, self.head_dim]
        q = self.q_proj(hidden_states).reshape(shape).transpose([0, 2, 1, 3])
        k = self.k_proj(hidden_states).reshape(shape).transpose([0, 2, 1, 3])
        v = self.v_proj(hidden_states).reshape(shape).transpose([0, 2, 1, 3])
        q, k = self.rotary_emb(q, k)
        scores = paddle.matmul(q, k, transpose_y=True) / math.sqrt(self.head_dim)
        future = paddle.triu(paddle.ones([q_len, q_len], dtype="float32"), diagonal=1)
        scores = paddle.where(future > 0, paddle.full_like(scores, float("-inf")), scores)
        probs = F.softmax(scores, axis=-1)
        out = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([bsz, q_len, HIDDEN])
        return self.o_proj(out)


class MiniCPMMLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(HIDDEN, INTERMEDIATE, bias_attr=False)
        self.up_proj = nn.Linear(HIDDEN, INTERMEDIATE, bias_attr=False)
        self.down_proj = nn.Linear(INTERMEDIATE, HIDDEN, bias_attr=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class MiniCPMDecoderLayer(nn.Layer):
    def __init__(self, depth_linear=False, rope_cache_dtype="float32"):
        super().__init__()
        self.self_attn = MiniCPMAttention(rope_cache_dtype)
        self.mlp = MiniCPMMLP()
        self.input_layernorm = MiniCPMRMSNorm(HIDDEN)
        self.post_attention_layernorm = MiniCPMRMSNorm(HIDDEN)
        self.scale_depth = SCALE_DEPTH
        self.num_hidden_layers = N_LAYERS
        self.depth_linear = depth_linear

    def _branch_scale(self):
        if self.depth_linear:
            return self.scale_depth / self.num_hidden_layers
        return self.scale_depth / math.sqrt(self.num_hidden_layers)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.self_attn(self.input_layernorm(hidden_states))
        hidden_states = residual + hidden_states * self._branch_scale()
        residual = hidden_states
        hidden_states = self.mlp(self.post_attention_layernorm(hidden_states))
        return residual + hidden_states * self._branch_scale()


class MiniCPMModel(nn.Layer):
    def __init__(self, depth_linear=False, rope_cache_dtype="float32"):
        super().__init__()
        self.scale_emb = SCALE_EMB
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.LayerList([MiniCPMDecoderLayer(depth_linear, rope_cache_dtype) for _ in range(N_LAYERS)])
        self.norm = MiniCPMRMSNorm(HIDDEN)

    def forward(self, input_ids):
        hidden_states = self.embed_tokens(input_ids) * self.scale_emb
        for layer in self.layers:
            hidden_states = layer(hidden_states)
        return self.norm(hidden_states)


class MiniCPMForCausalLM(nn.Layer):
    def __init__(self, depth_linear=False, rope_cache_dtype="float32"):
        super().__init__()
        self.model = MiniCPMModel(depth_linear, rope_cache_dtype)
        self.hidden_size, self.dim_model_base = HIDDEN, DIM_MODEL_BASE

    def forward(self, input_ids):
        hidden_states = self.model(input_ids)
        hidden_states = hidden_states / (self.hidden_size / self.dim_model_base)
        return paddle.matmul(hidden_states, self.model.embed_tokens.weight, transpose_y=True)


def _trained_look(m):
    rng = np.random.default_rng(31)
    m.model.embed_tokens.weight.set_value(rng.normal(0.0, 0.05, (VOCAB, HIDDEN)).astype("float32"))
    for _name, layer in m.named_sublayers():
        if isinstance(layer, MiniCPMRMSNorm):
            layer.weight.set_value(rng.normal(1.0, 0.15, HIDDEN).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_minicpm paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = MiniCPMForCausalLM(
        depth_linear=bug == "paddle_depth_scale_linear",
        rope_cache_dtype="float16" if bug == "paddle_rope_fp16_cache" else "float32",
    )
    _trained_look(m)
    m.eval()
    return m


def _ids():
    return np.random.default_rng(46).integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 10, 64]
    return (output**2).mean()
