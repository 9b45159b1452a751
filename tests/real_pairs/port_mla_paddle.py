"""Hand-written port, paddle side: a tiny DeepSeek-V2-style decoder LM with multi-head latent attention (written by "person A").

Sizes: vocab 64, hidden 32, 4 heads, 2 layers, SwiGLU intermediate 64, sequence length 10, batch 2.
Multi-head latent attention (MLA), per layer:
  q    = q_b_proj(RMSNorm(q_a_proj(x)))          q_lora_rank 16 -> 4 heads x (8 nope + 4 rope)
  ckv  = kv_a_proj_with_mqa(x)                   32 -> 16 latent + 4 rope key (ONE fused Linear)
  kv   = kv_b_proj(RMSNorm(latent))              16 -> 4 heads x (8 k_nope + 8 v)
  rope on the 4 rope dims only (q per head, the single k_pe shared by all heads), theta 10000,
  q = [q_nope | q_pe], k = [k_nope | k_pe], causal softmax(q.k / sqrt(12)) v, o_proj 32 -> 32.
Pre-norm residual blocks (RMSNorm eps 1e-6), a final RMSNorm and an UNTIED lm_head (32 -> 64).
No Linear has a bias.

Paddle idioms on this side (HF DeepseekV2 naming):
- root `DeepseekV2LM`: `embed_tokens` (nn.Embedding 64x32), `layers` (LayerList of
  `DeepseekV2DecoderLayer`), `norm`, `lm_head` Linear(32, 64).
- `DeepseekV2DecoderLayer` registers `self_attn`, `mlp` BEFORE `input_layernorm`,
  `post_attention_layernorm` (as HF does); the norms are called first.
- `DeepseekV2RMSNorm` is hand-written (create_parameter): x * rsqrt(mean(x^2) + eps) * w.
- `DeepseekV2Attention` registers q_a_proj, q_a_layernorm, q_b_proj, kv_a_proj_with_mqa,
  kv_a_layernorm, kv_b_proj, o_proj. q_b_proj's 48 output columns are laid out head by head,
  [h0: nope 8 | rope 4][h1: ...]; kv_b_proj's 64 columns head by head [h: k_nope 8 | v 8];
  kv_a_proj_with_mqa's 20 columns are [latent 16 | k_pe 4].
- ROPE IS INTERLEAVED PAIRS: rope dims (0, 1) rotate with frequency 0 and (2, 3) with frequency 1
  (GPT-J / complex-number style). The cos / sin table is computed INLINE in every attention
  forward from the positions (no buffer, no rope module).
- the causal mask is built inline (paddle.triu of -inf), F.softmax, matmuls by hand.
- `DeepseekV2MLP`: gate_proj, up_proj, down_proj, F.silu inline.
- model() gives the RMSNorm weights trained-looking values Normal(1, 0.1) (seeded) and the
  embedding Normal(0, 0.5).

The torch side (port_mla_torch.py) was written independently: separate kv-down and rope-key
Linears, a q-up Linear with all heads' nope rows first and all rope rows after, HALF-SPLIT rope
(rotate_half) with the rope rows permuted accordingly, a rope table held as buffers in one
rotary module at the root, F.scaled_dot_product_attention, nn.RMSNorm.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_rope_table_bf16       -> the inline rope table rounds cos / sin to bfloat16 (the dtype of
                                  the original checkpoint) before using them in float32
                                  (precision-level)
  paddle_residual_from_normed  -> the decoder layer adds the attention output to the NORMED
                                  hidden state instead of the layer input (first residual only)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, HIDDEN, N_HEADS, N_LAYERS, INTER = 64, 32, 4, 2, 64
Q_LORA, KV_LORA, NOPE, ROPE, V_DIM = 16, 16, 8, 4, 8
ROPE_THETA, EPS = 10000.0, 1e-6
BATCH, SEQ = 2, 10
OWN_BUGS = {"paddle_rope_table_bf16", "paddle_residual_from_normed"}
OTHER_BUGS = {"torch_kv_split_swapped", "torch_silu_of_product"}


class DeepseekV2RMSNorm(nn.Layer):
    def __init__(self, dim, eps=EPS):
        super().__init__()
        self.eps = eps
        self.weight = self.create_parameter([dim], default_initializer=nn.initializer.Constant(1.0))

    def forward(self, x):
        var = x.pow(2).mean(-1, keepdim=True)
        return x * paddle.rsqrt(var + self.eps) * self.weight


def _rope_interleaved(x, cos, sin):
    """x [..., S, 2k]; pairs (2i, 2i+1) rotate by angle i; cos / sin [S, k]."""
    x_even, x_odd = x[..., 0::2], x[..., 1::2]
    out_even = x_even * cos - x_odd * sin
    out_odd = x_even * sin + x_odd * cos
    return paddle.stack([out_even, out_odd], axis=-1).flatten(-2)


class DeepseekV2Attention(nn.Layer):
    def __init__(self, bf16_table=False):
        super().__init__()
        self.bf16_table = bf16_table
        self.q_head_dim = NOPE + ROPE
        self.softmax_scale = self.q_head_dim ** -0.5
        self.q_a_proj = nn.Linear(HIDDEN, Q_LORA, bias_attr=False)
        self.q_a_layernorm = DeepseekV2RMSNorm(Q_LORA)
        self.q_b_proj = nn.Linear(Q_LORA, N_HEADS * self.q_head_dim, bias_attr=False)
        self.kv_a_proj_with_mqa = nn.Linear(HIDDEN, KV_LORA + ROPE, bias_attr=False)
        self.kv_a_layernorm = DeepseekV2RMSNorm(KV_LORA)
        self.kv_b_proj = nn.Linear(KV_LORA, N_HEADS * (NOPE + V_DIM), bias_attr=False)
        self.o_proj = nn.Linear(N_HEADS * V_DIM, HIDDEN, bias_attr=False)

    def _rope_table(self, seq_len):
        inv_freq = 1.0 / (ROPE_THETA ** (paddle.arange(0, ROPE, 2, dtype="float32") / ROPE))
        pos = paddle.arange(seq_len, dtype="float32")
        angles = pos.unsqueeze(1) * inv_freq.unsqueeze(0)  # [S, ROPE / 2]
        cos, sin = paddle.cos(angles), paddle.sin(angles)
        if self.bf16_table:
            cos = cos.astype("bfloat16").astype("float32")
            sin = sin.astype("bfloat16").astype("float32")
        return cos, sin

    def forward(self, hidden_states):
        bsz, q_len, _ = hidden_states.shape
        q = self.q_b_proj(self.q_a_layernorm(self.q_a_proj(hidden_states)))
        q = q.reshape([bsz, q_len, N_HEADS, self.q_head_dim]).transpose([0, 2, 1, 3])
        q_nope, q_pe = paddle.split(q, [NOPE, ROPE], axis=-1)

        compressed_kv = self.kv_a_proj_with_mqa(hidden_states)
        compressed_kv, k_pe = paddle.split(compressed_kv, [KV_LORA, ROPE], axis=-1)
        k_pe = k_pe.reshape([bsz, q_len, 1, ROPE]).transpose([0, 2, 1, 3])  # [B, 1, S, ROPE]
        kv = self.kv_b_proj(self.kv_a_layernorm(compressed_kv))
        kv = kv.reshape([bsz, q_len, N_HEADS, NOPE + V_DIM]).transpose([0, 2, 1, 3])
        k_nope, value_states = paddle.split(kv, [NOPE, V_DIM], axis=-1)

        cos, sin = self._rope_table(q_len)
        q_pe = _rope_interleaved(q_pe, cos, sin)
        k_pe = _rope_interleaved(k_pe, cos, sin)

        query_states = paddle.concat([q_nope, q_pe], axis=-1)
        key_states = paddle.concat([k_nope, k_pe.expand([bsz, N_HEADS, q_len, ROPE])], axis=-1)

        scores = paddle.matmul(query_states, key_states, transpose_y=True) * self.softmax_scale
        mask = paddle.triu(paddle.full([q_len, q_len], float("-inf"), dtype="float32"), diagonal=1)
        probs = F.softmax(scores + mask, axis=-1)
        out = paddle.matmul(probs, value_states)  # [B, H, S, V]
        out = out.transpose([0, 2, 1, 3]).reshape([bsz, q_len, N_HEADS * V_DIM])
        return self.o_proj(out)


class DeepseekV2MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(HIDDEN, INTER, bias_attr=False)
        self.up_proj = nn.Linear(HIDDEN, INTER, bias_attr=False)
        self.down_proj = nn.Linear(INTER, HIDDEN, bias_attr=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DeepseekV2DecoderLayer(nn.Layer):
    def __init__(self, bf16_table=False, residual_from_normed=False):
        super().__init__()
        self.residual_from_normed = residual_from_normed
        self.self_attn = DeepseekV2Attention(bf16_table)
        self.mlp = DeepseekV2MLP()
        self.input_layernorm = DeepseekV2RMSNorm(HIDDEN)
        self.post_attention_layernorm = DeepseekV2RMSNorm(HIDDEN)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        if self.residual_from_normed:
            residual = hidden_states
        hidden_states = residual + self.self_attn(hidden_states)
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        return residual + self.mlp(hidden_states)


class DeepseekV2LM(nn.Layer):
    def __init__(self, bf16_table=False, residual_from_normed=False):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.LayerList(
            [DeepseekV2DecoderLayer(bf16_table, residual_from_normed) for _ in range(N_LAYERS)])
        self.norm = DeepseekV2RMSNorm(HIDDEN)
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias_attr=False)

    def forward(self, input_ids):
        h = self.embed_tokens(input_ids)
        for layer in self.layers:
            h = layer(h)
        return self.lm_head(self.norm(h))


def _trained_look(m):
    rng = np.random.default_rng(31)
    m.embed_tokens.weight.set_value(rng.normal(0.0, 0.5, (VOCAB, HIDDEN)).astype("float32"))
    for _name, layer in m.named_sublayers():
        if isinstance(layer, DeepseekV2RMSNorm):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.normal(1.0, 0.1, n).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_mla paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = DeepseekV2LM(bf16_table=bug == "paddle_rope_table_bf16",
                     residual_from_normed=bug == "paddle_residual_from_normed")
    _trained_look(m)
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(23)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 10, 64]
    return (output**2).mean()
