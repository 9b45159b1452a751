"""Hand-written port, torch side: a tiny Phi-3-style decoder-only LM with PARTIAL rotary (written by "person B").

The same math as port_phi3_paddle.py, re-implemented by hand in the style of HF's Phi-3 code.
Sizes: vocab 64, hidden 32, 4 heads of 8, partial_rotary_factor 0.5 (rotary on dims 0:4 of each
head, dims 4:8 pass through), rope theta 10000, intermediate 64, 2 layers, max positions 16,
RMSNorm eps 1e-5, causal, untied lm_head, sequence length 12, batch 2.

Torch idioms on this side:
- root `Phi3ForCausalLM`: `model` (`Phi3Model`: `embed_tokens`, `embed_dropout`, `layers` =
  ModuleList of `Phi3DecoderLayer`, `norm`) and `lm_head` nn.Linear(32, 64, bias=False).
- `Phi3DecoderLayer` registers `self_attn`, `mlp`, `input_layernorm`, `resid_attn_dropout`,
  `resid_mlp_dropout`, `post_attention_layernorm` (HF order); the residual is kept in a
  `residual` variable that is re-assigned between the two halves.
- `Phi3RMSNorm`: weight * (x * rsqrt(mean(x^2) + eps)).
- `Phi3Attention` registers `o_proj` FIRST, then ONE fused `qkv_proj` Linear(32, 96, no bias)
  (output rows q 0:32 | k 32:64 | v 64:96), then `rotary_emb`; the query / key rotary slices are
  rotated with `apply_rotary_pos_emb` (q * cos + rotate_half(q) * sin) and concatenated back
  with their pass-through dims; causal mask = full(-inf).triu(1); softmax in float32.
- `Phi3RotaryEmbedding` (dim 4): PRECOMPUTES in __init__ a cache for 16 positions, the
  duplicated emb = cat(freqs, freqs) [16, 4] as non-persistent buffers `cos_cached` /
  `sin_cached` (plus `inv_freq`); its forward(x, seq_len) slices the cache.
- `Phi3MLP`: ONE fused `gate_up_proj` Linear(32, 128, no bias) (gate rows 0:64 | up rows
  64:128), `down_proj` Linear(64, 32, no bias) and an `activation_fn` nn.SiLU module:
  down(up * act(gate)).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_rope_k_uses_q        -> copy-paste slip in apply_rotary_pos_emb: the key's rotated
                                 term is rotate_half(q) * sin instead of rotate_half(k) * sin
  torch_residual_not_updated -> Phi3DecoderLayer forgets `residual = hidden_states` after the
                                 attention half, so the MLP half adds to the layer's INPUT and
                                 the attention output is dropped from the residual stream
"""
import math
import os

import numpy as np
import torch
from torch import nn

VOCAB, HIDDEN, N_HEADS, INTERMEDIATE, N_LAYERS, MAX_POS = 64, 32, 4, 64, 2, 16
PARTIAL_ROTARY_FACTOR, ROPE_THETA, RMS_EPS = 0.5, 10000.0, 1e-5
BATCH, SEQ = 2, 12
OWN_BUGS = {"torch_rope_k_uses_q", "torch_residual_not_updated"}
OTHER_BUGS = {"paddle_rope_dim_in_exponent", "paddle_rms_eps_1e6"}


class Phi3RMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=RMS_EPS):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class Phi3RotaryEmbedding(nn.Module):
    def __init__(self, dim, max_position_embeddings=MAX_POS, base=ROPE_THETA):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        t = torch.arange(max_position_embeddings, dtype=torch.float32)
        freqs = torch.outer(t, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos(), persistent=False)
        self.register_buffer("sin_cached", emb.sin(), persistent=False)

    def forward(self, x, seq_len):
        return self.cos_cached[:seq_len].to(x.dtype), self.sin_cached[:seq_len].to(x.dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, k_uses_q=False):
    cos = cos[None, None, :, :]
    sin = sin[None, None, :, :]
    q_embed = (q * cos) + (rotate_half(q) * sin)
    if k_uses_q:
        k_embed = (k * cos) + (rotate_half(q) * sin)
    else:
        k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


class Phi3Attention(nn.Module):
    def __init__(self, k_uses_q=False):
        super().__init__()
        self.num_heads = N_HEADS
        self.head_dim = HIDDEN // N_HEADS
        self.rotary_ndims = int(self.head_dim * PARTIAL_ROTARY_FACTOR)
        self.k_uses_q = k_uses_q
        op_size = 3 * self.num_heads * self.head_dim
        self.o_proj = nn.Linear(self.num_heads * self.head_dim, HIDDEN, bias=False)
        self.qkv_proj = nn.Linear(HIDDEN, op_size, bias=False)
        self.rotary_emb = Phi3RotaryEmbedding(self.rotary_ndims)

    def forward(self, hidden_states):
        bsz, q_len, _ = hidden_states.size()
        qkv = self.qkv_proj(hidden_states)
        query_pos = self.num_heads * self.head_dim
        query_states = qkv[..., :query_pos]
        key_states = qkv[..., query_pos : 2 * query_pos]
        value_states = qkv[..., 2 * query_pos :]
        query_states = query_states.view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = key_states.view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        value_states = value_states.view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)

        cos, sin = self.rotary_emb(value_states, seq_len=q_len)
        q_rot, q_pass = query_states[..., : self.rotary_ndims], query_states[..., self.rotary_ndims :]
        k_rot, k_pass = key_states[..., : self.rotary_ndims], key_states[..., self.rotary_ndims :]
        q_rot, k_rot = apply_rotary_pos_emb(q_rot, k_rot, cos, sin, self.k_uses_q)
        query_states = torch.cat((q_rot, q_pass), dim=-1)
        key_states = torch.cat((k_rot, k_pass), dim=-1)

        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(self.head_dim)
        causal_mask = torch.full((q_len, q_len), float("-inf")).triu(1)
        attn_weights = attn_weights + causal_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(value_states.dtype)
        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2).contiguous().reshape(bsz, q_len, HIDDEN)
        return self.o_proj(attn_output)


class Phi3MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_up_proj = nn.Linear(HIDDEN, 2 * INTERMEDIATE, bias=False)
        self.down_proj = nn.Linear(INTERMEDIATE, HIDDEN, bias=False)
        self.activation_fn = nn.SiLU()

    def forward(self, hidden_states):
        up_states = self.gate_up_proj(hidden_states)
        gate, up_states = up_states.chunk(2, dim=-1)
        up_states = up_states * self.activation_fn(gate)
        return self.down_proj(up_states)


class Phi3DecoderLayer(nn.Module):
    def __init__(self, k_uses_q=False, keep_residual=False):
        super().__init__()
        self.keep_residual = keep_residual
        self.self_attn = Phi3Attention(k_uses_q)
        self.mlp = Phi3MLP()
        self.input_layernorm = Phi3RMSNorm(HIDDEN)
        self.resid_attn_dropout = nn.Dropout(0.1)
        self.resid_mlp_dropout = nn.Dropout(0.1)
        self.post_attention_layernorm = Phi3RMSNorm(HIDDEN)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        attn_outputs = self.self_attn(hidden_states)
        hidden_states = residual + self.resid_attn_dropout(attn_outputs)
        if not self.keep_residual:
            residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        return residual + self.resid_mlp_dropout(hidden_states)


class Phi3Model(nn.Module):
    def __init__(self, k_uses_q=False, keep_residual=False):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.embed_dropout = nn.Dropout(0.1)
        self.layers = nn.ModuleList([Phi3DecoderLayer(k_uses_q, keep_residual) for _ in range(N_LAYERS)])
        self.norm = Phi3RMSNorm(HIDDEN)

    def forward(self, input_ids):
        hidden_states = self.embed_dropout(self.embed_tokens(input_ids))
        for decoder_layer in self.layers:
            hidden_states = decoder_layer(hidden_states)
        return self.norm(hidden_states)


class Phi3ForCausalLM(nn.Module):
    def __init__(self, k_uses_q=False, keep_residual=False):
        super().__init__()
        self.model = Phi3Model(k_uses_q, keep_residual)
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, input_ids):
        return self.lm_head(self.model(input_ids))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_phi3 torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = Phi3ForCausalLM(k_uses_q=bug == "torch_rope_k_uses_q", keep_residual=bug == "torch_residual_not_updated")
    return m.eval()


def _ids():
    rng = np.random.default_rng(43)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 12, 64]
    return (output**2).mean()
