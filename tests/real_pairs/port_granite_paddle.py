"""Hand-written port, paddle side: a tiny Granite-style decoder LM with muP scalars (written by "person A").

Sizes: vocab 64, hidden 32, 4 query heads of 8, 2 key/value heads (grouped-query attention, each
kv head serves 2 consecutive query heads), SwiGLU intermediate 64, 2 layers, sequence length 12,
batch 2. RMSNorm eps 1e-6, rotary (rotate-half, theta 10000) on q and k, causal softmax.

Granite's muP-style scalars are kept as CONFIG ATTRIBUTES and applied inline, as in the HF
Granite code:
  embedding_multiplier 12.0  -> inputs_embeds = embed_tokens(ids) * 12.0 (inline in GraniteModel)
  residual_multiplier  0.22  -> x = x + sublayer(norm(x)) * 0.22, both sublayers (inline in the
                                decoder layer)
  attention_multiplier 0.125 -> the softmax scale, used INSTEAD of 1/sqrt(head_dim) = 0.354
  logits_scaling       6.0   -> logits = lm_head(h) / 6.0 (inline in GraniteForCausalLM)

Paddle idioms on this side (HF Granite layout):
- root `GraniteForCausalLM`: `model` (GraniteModel: `embed_tokens`, `layers` LayerList, `norm`)
  and an untied `lm_head` Linear(32, 64, no bias).
- `GraniteDecoderLayer` registers `self_attn`, `mlp`, `input_layernorm`,
  `post_attention_layernorm` (norms last, called first).
- `GraniteAttention`: separate `q_proj` (32 -> 32), `k_proj` / `v_proj` (32 -> 16), `o_proj`, all
  without bias. Rotary is computed INLINE from module-level helpers (`rope_cos_sin`,
  `rotate_half`): no rotary module, no buffer. The kv heads are expanded with
  paddle.repeat_interleave; the causal mask is paddle.triu + paddle.where.
- `GraniteMLP`: `gate_proj`, `up_proj`, `down_proj`, F.silu inline.
- `GraniteRMSNorm` hand-written (create_parameter `weight`).
- model() gives the norm weights trained-looking values (seeded U(0.7, 1.3)).

The torch side (port_granite_torch.py) was written independently: it folds the embedding
multiplier into an embedding wrapper, the residual multiplier into `Scale` modules and the logits
scaling into a `Scale` module; fused qkv and fused up|gate Linears; a rotary module.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_attn_scale_sqrt       -> the attention scales the scores by head_dim ** -0.5 (the Llama
                                  habit) instead of config.attention_multiplier
  paddle_mlp_residual_unscaled -> the decoder layer adds the MLP output to the residual stream
                                  without the residual_multiplier (the attention branch keeps it)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

BATCH, SEQ = 2, 12
OWN_BUGS = {"paddle_attn_scale_sqrt", "paddle_mlp_residual_unscaled"}
OTHER_BUGS = {"torch_gqa_tiled", "torch_rope_bf16_table"}


class GraniteConfig:
    vocab_size = 64
    hidden_size = 32
    intermediate_size = 64
    num_hidden_layers = 2
    num_attention_heads = 4
    num_key_value_heads = 2
    rms_norm_eps = 1e-6
    rope_theta = 10000.0
    embedding_multiplier = 12.0
    residual_multiplier = 0.22
    attention_multiplier = 0.125
    logits_scaling = 6.0

    def __init__(self, bug=""):
        self.bug = bug


def rope_cos_sin(seq_len, dim, theta):
    inv_freq = 1.0 / (theta ** (paddle.arange(0, dim, 2, dtype="float32") / dim))
    t = paddle.arange(seq_len, dtype="float32")
    freqs = paddle.outer(t, inv_freq)  # [L, D/2]
    emb = paddle.concat([freqs, freqs], axis=-1)  # [L, D]
    return paddle.cos(emb), paddle.sin(emb)


def rotate_half(x):
    x1, x2 = paddle.chunk(x, 2, axis=-1)
    return paddle.concat([-x2, x1], axis=-1)


class GraniteRMSNorm(nn.Layer):
    def __init__(self, hidden_size, eps):
        super().__init__()
        self.variance_epsilon = eps
        self.weight = self.create_parameter([hidden_size], default_initializer=nn.initializer.Constant(1.0))

    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * paddle.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states


class GraniteAttention(nn.Layer):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.num_heads = config.num_attention_heads
        self.num_kv_heads = config.num_key_value_heads
        self.head_dim = config.hidden_size // self.num_heads
        self.num_kv_groups = self.num_heads // self.num_kv_heads
        if config.bug == "paddle_attn_scale_sqrt":
            self.scaling = self.head_dim ** -0.5
        else:
            self.scaling = config.attention_multiplier
        h = config.hidden_size
        self.q_proj = nn.Linear(h, self.num_heads * self.head_dim, bias_attr=False)
        self.k_proj = nn.Linear(h, self.num_kv_heads * self.head_dim, bias_attr=False)
        self.v_proj = nn.Linear(h, self.num_kv_heads * self.head_dim, bias_attr=False)
        self.o_proj = nn.Linear(self.num_heads * self.head_dim, h, bias_attr=False)

    def forward(self, hidden_states):
        bsz, q_len, _ = hidden_states.shape
        q = self.q_proj(hidden_states).reshape([bsz, q_len, self.num_heads, self.head_dim]).transpose([0, 2, 1, 3])
        k = self.k_proj(hidden_states).reshape([bsz, q_len, self.num_kv_heads, self.head_dim]).transpose([0, 2, 1, 3])
        v = self.v_proj(hidden_states).reshape([bsz, q_len, self.num_kv_heads, self.head_dim]).transpose([0, 2, 1, 3])
        cos, sin = rope_cos_sin(q_len, self.head_dim, self.config.rope_theta)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = paddle.repeat_interleave(k, self.num_kv_groups, axis=1)
        v = paddle.repeat_interleave(v, self.num_kv_groups, axis=1)
        scores = paddle.matmul(q, k, transpose_y=True) * self.scaling
        future = paddle.triu(paddle.ones([q_len, q_len], dtype="float32"), diagonal=1).astype("bool")
        scores = paddle.where(future, paddle.full_like(scores, float("-inf")), scores)
        probs = F.softmax(scores, axis=-1)
        out = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([bsz, q_len, -1])
        return self.o_proj(out)


class GraniteMLP(nn.Layer):
    def __init__(self, config):
        super().__init__()
        h, i = config.hidden_size, config.intermediate_size
        self.gate_proj = nn.Linear(h, i, bias_attr=False)
        self.up_proj = nn.Linear(h, i, bias_attr=False)
        self.down_proj = nn.Linear(i, h, bias_attr=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class GraniteDecoderLayer(nn.Layer):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.residual_multiplier = config.residual_multiplier
        self.self_attn = GraniteAttention(config)
        self.mlp = GraniteMLP(config)
        self.input_layernorm = GraniteRMSNorm(config.hidden_size, config.rms_norm_eps)
        self.post_attention_layernorm = GraniteRMSNorm(config.hidden_size, config.rms_norm_eps)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.self_attn(self.input_layernorm(hidden_states))
        hidden_states = residual + hidden_states * self.residual_multiplier
        residual = hidden_states
        hidden_states = self.mlp(self.post_attention_layernorm(hidden_states))
        if self.config.bug == "paddle_mlp_residual_unscaled":
            return residual + hidden_states
        return residual + hidden_states * self.residual_multiplier


class GraniteModel(nn.Layer):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size,
                                         weight_attr=nn.initializer.Normal(0.0, 0.02))
        self.layers = nn.LayerList([GraniteDecoderLayer(config) for _ in range(config.num_hidden_layers)])
        self.norm = GraniteRMSNorm(config.hidden_size, config.rms_norm_eps)

    def forward(self, input_ids):
        hidden_states = self.embed_tokens(input_ids) * self.config.embedding_multiplier
        for layer in self.layers:
            hidden_states = layer(hidden_states)
        return self.norm(hidden_states)


class GraniteForCausalLM(nn.Layer):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.model = GraniteModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias_attr=False)

    def forward(self, input_ids):
        logits = self.lm_head(self.model(input_ids))
        return logits / self.config.logits_scaling


def _trained_look(m):
    rng = np.random.default_rng(43)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, GraniteRMSNorm):
            layer.weight.set_value(rng.uniform(0.7, 1.3, layer.weight.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_granite paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = GraniteForCausalLM(GraniteConfig(bug if bug in OWN_BUGS else ""))
    _trained_look(m)
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(31)
    return rng.integers(0, GraniteConfig.vocab_size, (BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 12, 64]
    return (output**2).mean()
