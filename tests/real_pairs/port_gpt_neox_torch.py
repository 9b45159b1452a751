"""Hand-written port, torch side: a tiny GPT-NeoX-style decoder (written by "person B").

The same math as port_gpt_neox_paddle.py, re-implemented by hand in the style of the Hugging
Face GPTNeoX code: positional `input_ids` [2, 10]; vocab 64, hidden 64, 4 heads of 16,
intermediate 256 (exact GELU), 2 layers with use_parallel_residual (x + attn(ln1(x)) +
mlp(ln2(x))), partial rotary embeddings on the first 25 % (4) of each head's dims (rotate-half,
base 10000), causal attention with norm factor sqrt(16), final LayerNorm, untied `embed_out`.
Output: logits [2, 10, 64].

Torch idioms on this side:
- root `GPTNeoXForCausalLM`: `gpt_neox` (`GPTNeoXModel`) and `embed_out` nn.Linear(64, 64,
  bias=False).
- `GPTNeoXModel`: `embed_in`, `layers` (ModuleList of `GPTNeoXLayer`), `final_layer_norm`, and
  ONE model-level `rotary_emb` (`GPTNeoXRotaryEmbedding`, non-persistent `inv_freq` buffer),
  called once per forward with (hidden, position_ids); its (cos, sin) are passed to every layer.
  position_ids = arange(L) is built in the forward.
- `GPTNeoXLayer`: `input_layernorm`, `post_attention_layernorm`, `attention`, `mlp` (HF order).
- `GPTNeoXAttention`: ONE fused `query_key_value` nn.Linear(64, 192) whose output is viewed
  [B, L, heads, 3 * head_size] and split per head into q | k | v (packing [h, 3, d]); `dense`
  out projection; a non-persistent bool `bias` buffer (tril [1, 1, 32, 32]) as the causal mask
  (masked_fill with finfo.min); rotate_half / partial rotary inline.
- `GPTNeoXMLP`: `dense_h_to_4h`, `act` (nn.GELU module), `dense_4h_to_h`.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_rope_freq_head_dim -> GPTNeoXRotaryEmbedding computes inv_freq with the head size (16)
                              as the exponent's denominator instead of the rotary dims (4):
                              inv_freq = 1 / 10000^(arange(0, 4, 2) / 16)
  torch_mlp_reuses_ln1     -> GPTNeoXLayer feeds the MLP input_layernorm(x) instead of
                              post_attention_layernorm(x) (the GPT-J single-LN block)
"""
import os

import numpy as np
import torch
from torch import nn

VOCAB_SIZE, HIDDEN_SIZE, NUM_HEADS, NUM_LAYERS = 64, 64, 4, 2
HEAD_SIZE = HIDDEN_SIZE // NUM_HEADS
ROTARY_PCT = 0.25
ROTARY_NDIMS = int(HEAD_SIZE * ROTARY_PCT)
ROTARY_BASE = 10000
INTERMEDIATE_SIZE = 256
MAX_POSITIONS = 32
LAYER_NORM_EPS = 1e-5
BATCH, SEQ = 2, 10
OWN_BUGS = {"torch_rope_freq_head_dim", "torch_mlp_reuses_ln1"}
OTHER_BUGS = {"paddle_rope_interleaved", "paddle_gelu_tanh"}


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class GPTNeoXRotaryEmbedding(nn.Module):
    def __init__(self, dim, base=10000, freq_denominator=None):
        super().__init__()
        denom = dim if freq_denominator is None else freq_denominator
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / denom))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    @torch.no_grad()
    def forward(self, x, position_ids):
        freqs = position_ids[:, :, None].float() * self.inv_freq[None, None, :]  # [B, L, rot/2]
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


class GPTNeoXAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer(
            "bias",
            torch.tril(torch.ones(MAX_POSITIONS, MAX_POSITIONS, dtype=torch.bool)).view(1, 1, MAX_POSITIONS, MAX_POSITIONS),
            persistent=False)
        self.norm_factor = HEAD_SIZE ** 0.5
        self.query_key_value = nn.Linear(HIDDEN_SIZE, 3 * HIDDEN_SIZE)
        self.dense = nn.Linear(HIDDEN_SIZE, HIDDEN_SIZE)

    def forward(self, hidden_states, cos, sin):
        bsz, seq_len, _ = hidden_states.shape
        qkv = self.query_key_value(hidden_states)
        qkv = qkv.view(bsz, seq_len, NUM_HEADS, 3 * HEAD_SIZE).permute(0, 2, 1, 3)
        query, key, value = qkv.split(HEAD_SIZE, dim=-1)  # [B, H, L, d] each

        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        q_rot, q_pass = query[..., :ROTARY_NDIMS], query[..., ROTARY_NDIMS:]
        k_rot, k_pass = key[..., :ROTARY_NDIMS], key[..., ROTARY_NDIMS:]
        query = torch.cat(((q_rot * cos) + (rotate_half(q_rot) * sin), q_pass), dim=-1)
        key = torch.cat(((k_rot * cos) + (rotate_half(k_rot) * sin), k_pass), dim=-1)

        attn_scores = torch.matmul(query, key.transpose(-1, -2)) / self.norm_factor
        causal_mask = self.bias[:, :, :seq_len, :seq_len]
        attn_scores = attn_scores.masked_fill(~causal_mask, torch.finfo(attn_scores.dtype).min)
        attn_weights = nn.functional.softmax(attn_scores, dim=-1, dtype=torch.float32).to(value.dtype)
        attn_output = torch.matmul(attn_weights, value)
        attn_output = attn_output.permute(0, 2, 1, 3).reshape(bsz, seq_len, HIDDEN_SIZE)
        return self.dense(attn_output)


class GPTNeoXMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense_h_to_4h = nn.Linear(HIDDEN_SIZE, INTERMEDIATE_SIZE)
        self.dense_4h_to_h = nn.Linear(INTERMEDIATE_SIZE, HIDDEN_SIZE)
        self.act = nn.GELU()

    def forward(self, hidden_states):
        return self.dense_4h_to_h(self.act(self.dense_h_to_4h(hidden_states)))


class GPTNeoXLayer(nn.Module):
    def __init__(self, mlp_reuses_ln1=False):
        super().__init__()
        self.mlp_reuses_ln1 = mlp_reuses_ln1
        self.input_layernorm = nn.LayerNorm(HIDDEN_SIZE, eps=LAYER_NORM_EPS)
        self.post_attention_layernorm = nn.LayerNorm(HIDDEN_SIZE, eps=LAYER_NORM_EPS)
        self.attention = GPTNeoXAttention()
        self.mlp = GPTNeoXMLP()

    def forward(self, hidden_states, cos, sin):
        attn_output = self.attention(self.input_layernorm(hidden_states), cos, sin)
        if self.mlp_reuses_ln1:
            mlp_output = self.mlp(self.input_layernorm(hidden_states))
        else:
            mlp_output = self.mlp(self.post_attention_layernorm(hidden_states))
        return mlp_output + attn_output + hidden_states


class GPTNeoXModel(nn.Module):
    def __init__(self, freq_denominator=None, mlp_reuses_ln1=False):
        super().__init__()
        self.embed_in = nn.Embedding(VOCAB_SIZE, HIDDEN_SIZE)
        self.layers = nn.ModuleList([GPTNeoXLayer(mlp_reuses_ln1) for _ in range(NUM_LAYERS)])
        self.final_layer_norm = nn.LayerNorm(HIDDEN_SIZE, eps=LAYER_NORM_EPS)
        self.rotary_emb = GPTNeoXRotaryEmbedding(ROTARY_NDIMS, ROTARY_BASE, freq_denominator)

    def forward(self, input_ids):
        hidden_states = self.embed_in(input_ids)
        position_ids = torch.arange(input_ids.shape[1], device=input_ids.device).unsqueeze(0)
        cos, sin = self.rotary_emb(hidden_states, position_ids)
        for layer in self.layers:
            hidden_states = layer(hidden_states, cos, sin)
        return self.final_layer_norm(hidden_states)


class GPTNeoXForCausalLM(nn.Module):
    def __init__(self, freq_denominator=None, mlp_reuses_ln1=False):
        super().__init__()
        self.gpt_neox = GPTNeoXModel(freq_denominator, mlp_reuses_ln1)
        self.embed_out = nn.Linear(HIDDEN_SIZE, VOCAB_SIZE, bias=False)

    def forward(self, input_ids):
        return self.embed_out(self.gpt_neox(input_ids))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_gpt_neox torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = GPTNeoXForCausalLM(freq_denominator=HEAD_SIZE if bug == "torch_rope_freq_head_dim" else None,
                           mlp_reuses_ln1=bug == "torch_mlp_reuses_ln1")
    return m.eval()


def _ids():
    rng = np.random.default_rng(104)
    return rng.integers(0, VOCAB_SIZE, (BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 10, 64]
    return (output**2).mean()
