"""Hand-written port, torch side: a tiny InternLM2-style decoder-only LM (written by "person B").

The same math as port_internlm2_paddle.py, re-implemented by hand in the style of the official
InternLM2 modeling code. Sizes: vocab 64, hidden 32, 4 query heads, 2 key/value heads, head dim
8, intermediate 64, 2 layers, sequence length 12, batch 2. Rotary (rotate-half, rope_theta 1e6),
causal attention, RMSNorm eps 1e-5, untied `output` head.

Torch idioms on this side:
- root `InternLM2ForCausalLM`: `model` (`InternLM2Model`: `tok_embeddings`, `layers` =
  ModuleList of `InternLM2DecoderLayer`, `norm`) and `output` nn.Linear(32, 64, bias=False).
- `InternLM2DecoderLayer` registers `attention`, `feed_forward`, `attention_norm`, `ffn_norm`
  (the official order; the norms are called first).
- `InternLM2RMSNorm`: variance in float32, hidden * torch.rsqrt(variance + eps) * weight.
- `InternLM2Attention`: ONE packed `wqkv` nn.Linear(32, 64, bias=False) whose 64 output rows are
  laid out PER KEY/VALUE GROUP: viewed as [kv_heads = 2, q_per_kv + 2 = 4, head_dim = 8], group g
  holds its 2 query heads (q heads 2g, 2g + 1), then its key head, then its value head
  (rows 32 g + 0:16 = q, 32 g + 16:24 = k, 32 g + 24:32 = v). `wo` nn.Linear(32, 32), and a
  `rotary_emb` module (`InternLM2RotaryEmbedding`: `inv_freq` / `cos_cached` / `sin_cached`
  non-persistent buffers, forward(x, seq_len) -> (cos, sin)) called inside the attention's
  forward. Keys / values are shared by repeat_kv (expand + reshape: q head h uses kv head
  h // 2); attention by F.scaled_dot_product_attention(is_causal=True).
- `InternLM2MLP` registers `w1` (gate), `w3` (up), `w2` (down), `act_fn` (nn.SiLU module):
  w2(act_fn(w1(x)) * w3(x)).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_wqkv_kv_swapped    -> the packed output is unpacked with key = slot -1 and value =
                              slot -2 of each group (the last two slots read the wrong way round)
  torch_rope_default_theta -> the rotary module is built with the class default base 10000
                              instead of the config's rope_theta 1e6
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB_SIZE, HIDDEN_SIZE, NUM_HEADS, NUM_KV_HEADS, INTERMEDIATE, NUM_LAYERS = 64, 32, 4, 2, 64, 2
HEAD_DIM = HIDDEN_SIZE // NUM_HEADS
ROPE_THETA, RMS_NORM_EPS, MAX_POS = 1000000.0, 1e-5, 32
BATCH, SEQ = 2, 12
OWN_BUGS = {"torch_wqkv_kv_swapped", "torch_rope_default_theta"}
OTHER_BUGS = {"paddle_gqa_tile", "paddle_rmsnorm_default_eps"}


class InternLM2RMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class InternLM2RotaryEmbedding(nn.Module):
    def __init__(self, dim, max_position_embeddings=MAX_POS, base=10000):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        t = torch.arange(max_position_embeddings, dtype=torch.float32)
        freqs = torch.einsum("i,j->ij", t, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos(), persistent=False)
        self.register_buffer("sin_cached", emb.sin(), persistent=False)

    def forward(self, x, seq_len):
        return self.cos_cached[:seq_len].to(x.dtype), self.sin_cached[:seq_len].to(x.dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin):
    cos, sin = cos[None, None], sin[None, None]
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


def repeat_kv(hidden_states, n_rep):
    batch, num_kv, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_kv, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_kv * n_rep, slen, head_dim)


class InternLM2Attention(nn.Module):
    def __init__(self, rope_base=ROPE_THETA, kv_swapped=False):
        super().__init__()
        self.num_key_value_groups = NUM_HEADS // NUM_KV_HEADS
        self.kv_swapped = kv_swapped
        self.wqkv = nn.Linear(HIDDEN_SIZE, (NUM_HEADS + 2 * NUM_KV_HEADS) * HEAD_DIM, bias=False)
        self.wo = nn.Linear(NUM_HEADS * HEAD_DIM, HIDDEN_SIZE, bias=False)
        if rope_base is None:
            self.rotary_emb = InternLM2RotaryEmbedding(HEAD_DIM)
        else:
            self.rotary_emb = InternLM2RotaryEmbedding(HEAD_DIM, base=rope_base)

    def forward(self, hidden_states):
        bsz, q_len, _ = hidden_states.size()
        qkv_states = self.wqkv(hidden_states)
        gs = 2 + self.num_key_value_groups
        qkv_states = qkv_states.view(bsz, q_len, NUM_KV_HEADS, gs, HEAD_DIM)  # b q (h gs d)
        query_states = qkv_states[..., : self.num_key_value_groups, :]
        query_states = query_states.reshape(bsz, q_len, NUM_HEADS, HEAD_DIM)
        if self.kv_swapped:
            key_states = qkv_states[..., -1, :]
            value_states = qkv_states[..., -2, :]
        else:
            key_states = qkv_states[..., -2, :]
            value_states = qkv_states[..., -1, :]
        query_states = query_states.transpose(1, 2)
        key_states = key_states.transpose(1, 2)
        value_states = value_states.transpose(1, 2)
        cos, sin = self.rotary_emb(value_states, q_len)
        query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)
        key_states = repeat_kv(key_states, self.num_key_value_groups)
        value_states = repeat_kv(value_states, self.num_key_value_groups)
        attn_output = F.scaled_dot_product_attention(
            query_states, key_states, value_states, is_causal=True, scale=1.0 / math.sqrt(HEAD_DIM)
        )
        attn_output = attn_output.transpose(1, 2).reshape(bsz, q_len, HIDDEN_SIZE)
        return self.wo(attn_output)


class InternLM2MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(HIDDEN_SIZE, INTERMEDIATE, bias=False)
        self.w3 = nn.Linear(HIDDEN_SIZE, INTERMEDIATE, bias=False)
        self.w2 = nn.Linear(INTERMEDIATE, HIDDEN_SIZE, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        return self.w2(self.act_fn(self.w1(x)) * self.w3(x))


class InternLM2DecoderLayer(nn.Module):
    def __init__(self, rope_base=ROPE_THETA, kv_swapped=False):
        super().__init__()
        self.attention = InternLM2Attention(rope_base, kv_swapped)
        self.feed_forward = InternLM2MLP()
        self.attention_norm = InternLM2RMSNorm(HIDDEN_SIZE, eps=RMS_NORM_EPS)
        self.ffn_norm = InternLM2RMSNorm(HIDDEN_SIZE, eps=RMS_NORM_EPS)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.attention(self.attention_norm(hidden_states))
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.feed_forward(self.ffn_norm(hidden_states))
        return residual + hidden_states


class InternLM2Model(nn.Module):
    def __init__(self, rope_base=ROPE_THETA, kv_swapped=False):
        super().__init__()
        self.tok_embeddings = nn.Embedding(VOCAB_SIZE, HIDDEN_SIZE)
        self.layers = nn.ModuleList([InternLM2DecoderLayer(rope_base, kv_swapped) for _ in range(NUM_LAYERS)])
        self.norm = InternLM2RMSNorm(HIDDEN_SIZE, eps=RMS_NORM_EPS)

    def forward(self, input_ids):
        hidden_states = self.tok_embeddings(input_ids)
        for decoder_layer in self.layers:
            hidden_states = decoder_layer(hidden_states)
        return self.norm(hidden_states)


class InternLM2ForCausalLM(nn.Module):
    def __init__(self, rope_base=ROPE_THETA, kv_swapped=False):
        super().__init__()
        self.model = InternLM2Model(rope_base, kv_swapped)
        self.output = nn.Linear(HIDDEN_SIZE, VOCAB_SIZE, bias=False)

    def forward(self, input_ids):
        return self.output(self.model(input_ids))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_internlm2 torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    # the bug: rope_theta is not forwarded, the rotary module keeps its default base 10000
    rope_base = None if bug == "torch_rope_default_theta" else ROPE_THETA
    m = InternLM2ForCausalLM(rope_base=rope_base, kv_swapped=bug == "torch_wqkv_kv_swapped")
    with torch.no_grad():
        gen = torch.Generator().manual_seed(7)
        for mod in m.modules():
            if isinstance(mod, InternLM2RMSNorm):
                mod.weight.copy_(torch.empty(HIDDEN_SIZE).uniform_(0.7, 1.3, generator=gen))
    return m.eval()


def _ids():
    rng = np.random.default_rng(23)
    return rng.integers(0, VOCAB_SIZE, (BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 12, 64]
    return (output**2).mean()
