"""Hand-written port, paddle side: a tiny Phi-1 / Phi-2 style decoder LM (written by "person A").

Sizes: vocab 64, width 32, 4 heads of 8, MLP hidden 128, 2 layers, sequence length 12, batch 2.
Phi block (ONE LayerNorm per block, attention and MLP in PARALLEL on the same normed input):
    h = ln(x);  x = x + attn(h) + mlp(h)
then a final LayerNorm and an lm head WITH bias. LayerNorm eps 1e-5 everywhere.
Attention: causal, scale 1/sqrt(8), PARTIAL rotary: only the first 4 of each head's 8 q / k
features are rotated (partial_rotary_factor 0.5), GPT-NeoX "rotate_half" layout (feature i is
paired with feature i + 2), base 10000, inv_freq = base^(-2i / rotary_dim) for i = 0, 1; the other
4 features pass through. MLP: fc1 (32 -> 128) -> gelu_new (the tanh approximation) -> fc2.
All projections have biases.

Paddle idioms on this side (HF PhiForCausalLM layout):
- root `PhiForCausalLM`: `model` (`PhiModel`) then `lm_head` Linear(32, 64, bias).
- `PhiModel`: `embed_tokens`, `layers` (LayerList of `PhiDecoderLayer`, iterated),
  `final_layernorm`.
- `PhiDecoderLayer` registers `self_attn`, `mlp`, then `input_layernorm` (called first).
- `PhiAttention`: SEPARATE `q_proj`, `k_proj`, `v_proj` Linear(32, 32, bias), a `rotary_emb`
  module (`PhiPartialRotary`, with a non-persistable `inv_freq` buffer) that takes (q, k) as
  [B, heads, L, 8] and returns them rotated, then the causal softmax (mask built inline with
  paddle.triu) and the output Linear `dense`.
- `PhiMLP`: `fc1`, `fc2`; gelu_new is inline F.gelu(approximate=True).
- model() gives LayerNorms and all biases trained-looking (seeded) values.

The torch side (port_phi_torch.py) was written independently in the style of the original
"MixFormer" Phi code: one nn.Sequential `layers` (embedding wrapper, parallel blocks, an LM-head
module holding the final LayerNorm), a fused `Wqkv`, GPT-J INTERLEAVED partial rotary computed
inline from cos / sin buffers, and a NewGELU activation module.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_gelu_exact          -> the MLP uses F.gelu(x) (exact erf gelu) instead of gelu_new
                                (tanh approximation): precision-level
  paddle_rotary_freq_headdim -> the rotary module computes inv_freq = base^(-2i / head_dim)
                                (head_dim 8) instead of base^(-2i / rotary_dim) (rotary_dim 4)
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, HIDDEN, HEADS, HEAD_DIM, INTER, LAYERS = 64, 32, 4, 8, 128, 2
PARTIAL_ROTARY_FACTOR, ROPE_THETA, LN_EPS = 0.5, 10000.0, 1e-5
BATCH, SEQ = 2, 12
OWN_BUGS = {"paddle_gelu_exact", "paddle_rotary_freq_headdim"}
OTHER_BUGS = {"torch_qkv_view_heads_first", "torch_residual_after_ln"}


def rotate_half(x):
    half = x.shape[-1] // 2
    return paddle.concat([-x[..., half:], x[..., :half]], axis=-1)


class PhiPartialRotary(nn.Layer):
    """Rotates the first `rotary_dim` features of each head of q and k (rotate_half layout)."""

    def __init__(self, head_dim, partial_factor, base, freq_on_head_dim=False):
        super().__init__()
        self.rotary_dim = int(head_dim * partial_factor)
        denom = head_dim if freq_on_head_dim else self.rotary_dim
        inv_freq = 1.0 / (base ** (np.arange(0, self.rotary_dim, 2, dtype="float32") / denom))
        self.register_buffer("inv_freq", paddle.to_tensor(inv_freq.astype("float32")), persistable=False)

    def forward(self, q, k):
        seq_len = q.shape[2]
        t = paddle.arange(seq_len, dtype="float32")
        freqs = paddle.outer(t, self.inv_freq)  # [L, rot/2]
        emb = paddle.concat([freqs, freqs], axis=-1)  # [L, rot]
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]
        r = self.rotary_dim
        q_rot, q_pass = q[..., :r], q[..., r:]
        k_rot, k_pass = k[..., :r], k[..., r:]
        q_rot = q_rot * cos + rotate_half(q_rot) * sin
        k_rot = k_rot * cos + rotate_half(k_rot) * sin
        return paddle.concat([q_rot, q_pass], axis=-1), paddle.concat([k_rot, k_pass], axis=-1)


class PhiAttention(nn.Layer):
    def __init__(self, freq_on_head_dim=False):
        super().__init__()
        self.q_proj = nn.Linear(HIDDEN, HEADS * HEAD_DIM)
        self.k_proj = nn.Linear(HIDDEN, HEADS * HEAD_DIM)
        self.v_proj = nn.Linear(HIDDEN, HEADS * HEAD_DIM)
        self.dense = nn.Linear(HEADS * HEAD_DIM, HIDDEN)
        self.rotary_emb = PhiPartialRotary(HEAD_DIM, PARTIAL_ROTARY_FACTOR, ROPE_THETA, freq_on_head_dim)

    def forward(self, hidden_states):
        b, seq_len, _ = hidden_states.shape

        def heads(t):
            return t.reshape([b, seq_len, HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])

        q = heads(self.q_proj(hidden_states))
        k = heads(self.k_proj(hidden_states))
        v = heads(self.v_proj(hidden_states))
        q, k = self.rotary_emb(q, k)
        scores = paddle.matmul(q, k, transpose_y=True) / math.sqrt(HEAD_DIM)
        future = paddle.triu(paddle.ones([seq_len, seq_len], dtype="float32"), diagonal=1).astype("bool")
        scores = paddle.where(future, paddle.full_like(scores, float("-inf")), scores)
        probs = F.softmax(scores, axis=-1)
        ctx = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([b, seq_len, HEADS * HEAD_DIM])
        return self.dense(ctx)


class PhiMLP(nn.Layer):
    def __init__(self, exact_gelu=False):
        super().__init__()
        self.exact_gelu = exact_gelu
        self.fc1 = nn.Linear(HIDDEN, INTER)
        self.fc2 = nn.Linear(INTER, HIDDEN)

    def forward(self, hidden_states):
        h = self.fc1(hidden_states)
        h = F.gelu(h) if self.exact_gelu else F.gelu(h, approximate=True)
        return self.fc2(h)


class PhiDecoderLayer(nn.Layer):
    def __init__(self, exact_gelu=False, freq_on_head_dim=False):
        super().__init__()
        self.self_attn = PhiAttention(freq_on_head_dim)
        self.mlp = PhiMLP(exact_gelu)
        self.input_layernorm = nn.LayerNorm(HIDDEN, epsilon=LN_EPS)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        attn_outputs = self.self_attn(hidden_states)
        feed_forward_hidden_states = self.mlp(hidden_states)
        return attn_outputs + feed_forward_hidden_states + residual


class PhiModel(nn.Layer):
    def __init__(self, exact_gelu=False, freq_on_head_dim=False):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.LayerList([PhiDecoderLayer(exact_gelu, freq_on_head_dim) for _ in range(LAYERS)])
        self.final_layernorm = nn.LayerNorm(HIDDEN, epsilon=LN_EPS)

    def forward(self, input_ids):
        hidden_states = self.embed_tokens(input_ids)
        for layer in self.layers:
            hidden_states = layer(hidden_states)
        return self.final_layernorm(hidden_states)


class PhiForCausalLM(nn.Layer):
    def __init__(self, exact_gelu=False, freq_on_head_dim=False):
        super().__init__()
        self.model = PhiModel(exact_gelu, freq_on_head_dim)
        self.lm_head = nn.Linear(HIDDEN, VOCAB)

    def forward(self, input_ids):
        return self.lm_head(self.model(input_ids))


def _trained_look(m):
    rng = np.random.default_rng(31)
    for name, p in m.named_parameters():
        if name.endswith("layernorm.weight"):
            p.set_value(rng.uniform(0.7, 1.3, p.shape).astype("float32"))
        elif name.endswith("bias"):
            p.set_value(rng.normal(0.0, 0.1, p.shape).astype("float32"))
        elif name.endswith("embed_tokens.weight"):
            p.set_value(rng.normal(0.0, 1.0, p.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_phi paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = PhiForCausalLM(exact_gelu=bug == "paddle_gelu_exact", freq_on_head_dim=bug == "paddle_rotary_freq_headdim")
    _trained_look(m)
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(23)
    return rng.integers(0, VOCAB, size=(BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 12, 64]
    return (output**2).mean()
