"""Hand-written port, paddle side: a tiny StableLM-2-style decoder LM (written by "person A").

Sizes: vocab 96, width 64, 4 heads of 16, SwiGLU hidden 96, 2 layers, sequence length 10,
batch 2. StableLM 2 features kept:
- LayerNorm WITH bias (eps 1e-6) everywhere: one norm per layer (parallel residual) and a final
  norm;
- parallel residual: out = x + attn(ln(x)) + mlp(ln(x)), both branches read the SAME normed x;
- q / k / v projections with bias, o_proj without bias;
- per-head q / k LayerNorm (weight only, no bias, eps 1e-6) on each head's 16 dims, BEFORE the
  rotary embedding;
- PARTIAL rotary embedding: only the first 8 of each head's 16 dims (partial_rotary_factor 0.5)
  are rotated, base 10000, frequencies 10000^(-i / 8) for i = 0, 2, 4, 6; the other 8 dims pass
  through. HF / NeoX half-split convention: dim j is paired with dim j + 4 (rotate_half).
- causal softmax attention, untied lm_head without bias.

Paddle idioms on this side (HF StableLmForCausalLM layout):
- root `StableLmForCausalLM`: `embed_tokens` (Normal(0, 0.05)), `layers` (LayerList of
  `StableLmDecoderLayer`), `norm` (nn.LayerNorm), `lm_head` nn.Linear(64, 96, bias_attr=False).
- `StableLmDecoderLayer` registers `input_layernorm` first, then `self_attn`, then `mlp`.
- `StableLmAttention`: separate `q_proj`, `k_proj`, `v_proj` (with bias), `o_proj` (no bias),
  `q_layernorm` / `k_layernorm` = `StableLmLayerNormPerHead` (a LayerList `norms` of one
  nn.LayerNorm(16, bias_attr=False) per head; the heads are split with paddle.split and
  concatenated back), and a `rotary_emb` module (StableLmRotaryEmbedding: an `inv_freq` buffer,
  forward(x, position_ids) -> (cos, sin) of width 8). The rotation itself (rotate_half on the
  first 8 dims, concat with the pass-through dims) is inline in the attention forward; the causal
  mask is paddle.triu + paddle.where.
- `StableLmMLP`: ONE fused `gate_up_proj` nn.Linear(64, 192, no bias), columns 0:96 = gate,
  96:192 = up, split with paddle.split; an `act_fn` nn.Silu module; `down_proj` (no bias).
- model() gives every LayerNorm trained-looking weights / biases and every projection bias
  trained-looking values (seeded), so that nothing is an identity.

The torch side (port_stablelm_torch.py) was written independently: a fused Wqkv, one
headwise-norm module holding a [4, 16] weight, INTERLEAVED (GPT-J style) partial rotary applied
inline from root-level cos / sin buffers, separate w1 / w3 / w2 and scaled_dot_product_attention.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_qk_norm_shared    -> StableLmLayerNormPerHead applies norms[0] to every head (the loop
                              index is not used), so heads 1..3 get head 0's norm weight
  paddle_rope_freq_head_dim -> StableLmRotaryEmbedding computes inv_freq = base^(-i / head_dim)
                              (16) instead of base^(-i / rotary_ndims) (8): the partial-rotary
                              frequencies are those of a full-width rotary, truncated
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, HIDDEN, HEADS, HEAD_DIM, INTER, LAYERS = 96, 64, 4, 16, 96, 2
PARTIAL_ROTARY_FACTOR, ROPE_THETA, LN_EPS = 0.5, 10000.0, 1e-6
ROT = int(HEAD_DIM * PARTIAL_ROTARY_FACTOR)  # 8
BATCH, SEQ = 2, 10
OWN_BUGS = {"paddle_qk_norm_shared", "paddle_rope_freq_head_dim"}
OTHER_BUGS = {"torch_ln_default_eps", "torch_rotary_last_dims"}


def rotate_half(x):
    x1, x2 = paddle.split(x, 2, axis=-1)
    return paddle.concat([-x2, x1], axis=-1)


class StableLmRotaryEmbedding(nn.Layer):
    def __init__(self, dim, base=ROPE_THETA, freq_dim=None):
        super().__init__()
        self.dim = dim
        freq_dim = freq_dim or dim
        inv_freq = 1.0 / (base ** (paddle.arange(0, dim, 2, dtype="float32") / freq_dim))
        self.register_buffer("inv_freq", inv_freq, persistable=False)

    def forward(self, x, position_ids):
        freqs = position_ids.astype("float32").unsqueeze(-1) * self.inv_freq.unsqueeze(0)  # [L, dim/2]
        emb = paddle.concat([freqs, freqs], axis=-1)  # [L, dim]
        return emb.cos().astype(x.dtype), emb.sin().astype(x.dtype)


class StableLmLayerNormPerHead(nn.Layer):
    def __init__(self, dim, num_heads, eps=LN_EPS, shared=False):
        super().__init__()
        self.dim, self.num_heads, self.shared = dim, num_heads, shared
        self.norms = nn.LayerList([nn.LayerNorm(dim, epsilon=eps, bias_attr=False) for _ in range(num_heads)])

    def forward(self, hidden_states):  # [B, L, H, D]
        states_per_heads = paddle.split(hidden_states, self.num_heads, axis=2)
        if self.shared:
            outs = [self.norms[0](s) for s in states_per_heads]
        else:
            outs = [norm(s) for norm, s in zip(self.norms, states_per_heads)]
        return paddle.concat(outs, axis=2)


class StableLmAttention(nn.Layer):
    def __init__(self, shared_qk_norm=False, freq_head_dim=False):
        super().__init__()
        self.q_proj = nn.Linear(HIDDEN, HEADS * HEAD_DIM)
        self.k_proj = nn.Linear(HIDDEN, HEADS * HEAD_DIM)
        self.v_proj = nn.Linear(HIDDEN, HEADS * HEAD_DIM)
        self.o_proj = nn.Linear(HEADS * HEAD_DIM, HIDDEN, bias_attr=False)
        self.q_layernorm = StableLmLayerNormPerHead(HEAD_DIM, HEADS, shared=shared_qk_norm)
        self.k_layernorm = StableLmLayerNormPerHead(HEAD_DIM, HEADS, shared=shared_qk_norm)
        self.rotary_emb = StableLmRotaryEmbedding(ROT, freq_dim=HEAD_DIM if freq_head_dim else None)

    def forward(self, hidden_states, position_ids):
        bsz, q_len, _ = hidden_states.shape
        q = self.q_proj(hidden_states).reshape([bsz, q_len, HEADS, HEAD_DIM])
        k = self.k_proj(hidden_states).reshape([bsz, q_len, HEADS, HEAD_DIM])
        v = self.v_proj(hidden_states).reshape([bsz, q_len, HEADS, HEAD_DIM])
        q = self.q_layernorm(q)
        k = self.k_layernorm(k)
        q, k, v = (t.transpose([0, 2, 1, 3]) for t in (q, k, v))  # [B, H, L, D]

        cos, sin = self.rotary_emb(v, position_ids)  # [L, ROT]
        q_rot, q_pass = q[..., :ROT], q[..., ROT:]
        k_rot, k_pass = k[..., :ROT], k[..., ROT:]
        q_rot = q_rot * cos + rotate_half(q_rot) * sin
        k_rot = k_rot * cos + rotate_half(k_rot) * sin
        q = paddle.concat([q_rot, q_pass], axis=-1)
        k = paddle.concat([k_rot, k_pass], axis=-1)

        scores = paddle.matmul(q, k, transpose_y=True) / math.sqrt(HEAD_DIM)
        future = paddle.triu(paddle.ones([q_len, q_len], dtype="float32"), diagonal=1).astype("bool")
        scores = paddle.where(future, paddle.full_like(scores, float("-inf")), scores)
        probs = F.softmax(scores, axis=-1)
        out = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([bsz, q_len, HIDDEN])
        return self.o_proj(out)


class StableLmMLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.gate_up_proj = nn.Linear(HIDDEN, 2 * INTER, bias_attr=False)  # [gate | up]
        self.down_proj = nn.Linear(INTER, HIDDEN, bias_attr=False)
        self.act_fn = nn.Silu()

    def forward(self, x):
        gate, up = paddle.split(self.gate_up_proj(x), 2, axis=-1)
        return self.down_proj(self.act_fn(gate) * up)


class StableLmDecoderLayer(nn.Layer):
    def __init__(self, **bugs):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(HIDDEN, epsilon=LN_EPS)
        self.self_attn = StableLmAttention(**bugs)
        self.mlp = StableLmMLP()

    def forward(self, hidden_states, position_ids):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        attn_output = self.self_attn(hidden_states, position_ids)
        mlp_output = self.mlp(hidden_states)
        return residual + attn_output + mlp_output  # parallel residual


class StableLmForCausalLM(nn.Layer):
    def __init__(self, **bugs):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN, weight_attr=nn.initializer.Normal(0.0, 0.05))
        self.layers = nn.LayerList([StableLmDecoderLayer(**bugs) for _ in range(LAYERS)])
        self.norm = nn.LayerNorm(HIDDEN, epsilon=LN_EPS)
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias_attr=False)

    def forward(self, input_ids):
        position_ids = paddle.arange(input_ids.shape[1], dtype="int64")
        h = self.embed_tokens(input_ids)
        for layer in self.layers:
            h = layer(h, position_ids)
        return self.lm_head(self.norm(h))


def _trained_look(m):
    rng = np.random.default_rng(44)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.normal(1.0, 0.15, n).astype("float32"))
            if layer.bias is not None:
                layer.bias.set_value(rng.normal(0.0, 0.1, n).astype("float32"))
        elif isinstance(layer, nn.Linear) and layer.bias is not None:
            n = layer.bias.shape[0]
            layer.bias.set_value(rng.normal(0.0, 0.1, n).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_stablelm paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = StableLmForCausalLM(shared_qk_norm=bug == "paddle_qk_norm_shared",
                            freq_head_dim=bug == "paddle_rope_freq_head_dim")
    _trained_look(m)
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(44)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 10, 96]
    return (output**2).mean()
