"""Hand-written port, torch side: a tiny OLMo-style decoder LM (written by "person B", HF transformers' Olmo layout).

The same math as port_olmo_paddle.py, re-implemented by hand: vocab 64, hidden 32, 4 heads of
8, intermediate 64, 2 layers, non-parametric LayerNorm (eps 1e-5) before attention / MLP and at
the end, q / k / v each clamped to [-1, 1] (clip_qkv), rotate-half rotary (theta 10000),
causal attention, SwiGLU, sequence length 12, batch 2. No bias anywhere.

Torch idioms on this side:
- root `OlmoForCausalLM`: `model` (`OlmoModel`) and `lm_head` Linear(32, 64, no bias). This
  side does NOT tie: lm_head is its own tensor (it receives the same values as the embedding
  when the weights are copied, since the paddle model reuses its embedding matrix).
- `OlmoModel` registers `embed_tokens`, `layers` (ModuleList of `OlmoDecoderLayer`), `norm`
  and a root-level `rotary_emb` (`OlmoRotaryEmbedding`, non-persistent `inv_freq` buffer),
  called ONCE per forward as rotary_emb(x, position_ids) -> (cos, sin), which every layer
  receives.
- `OlmoLayerNorm`: F.layer_norm(x, shape, None, None, eps) on float32 (no parameters).
- `OlmoDecoderLayer` registers `self_attn`, `mlp`, `input_layernorm`, `post_attention_layernorm`.
- `OlmoAttention`: SEPARATE `q_proj`, `k_proj`, `v_proj` (each 32 -> 32) clamped one by one
  (`clamp_(min=-clip, max=clip)`), rotary applied inline from module-level helpers
  (`rotate_half`, `apply_rotary_pos_emb`), F.scaled_dot_product_attention(is_causal=True),
  `o_proj`.
- `OlmoMLP`: SEPARATE `gate_proj` and `up_proj` (32 -> 64), `down_proj` (64 -> 32) and an
  `act_fn` nn.SiLU module: down_proj(act_fn(gate_proj(x)) * up_proj(x)).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_clip_v_unclipped  -> the attention clamps only q and k (v is left unclipped, as with a
                             qk-norm habit)
  torch_rotate_half_sign  -> the module-level rotate_half is given the flipped sign,
                             cat(x2, -x1) instead of cat(-x2, x1) (the attention passes
                             flipped=True): every rotation turns the other way
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

HIDDEN, HEADS, LAYERS, INTER, VOCAB = 32, 4, 2, 64, 64
HEAD_DIM = HIDDEN // HEADS
CLIP_QKV, ROPE_THETA, LN_EPS = 1.0, 10000.0, 1e-5
BATCH, SEQ = 2, 12
OWN_BUGS = {"torch_clip_v_unclipped", "torch_rotate_half_sign"}
OTHER_BUGS = {"paddle_ln_eps_1e6", "paddle_swiglu_gate_first"}


def rotate_half(x, flipped=False):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    if flipped:
        return torch.cat((x2, -x1), dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1, flipped=False):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    return (q * cos) + (rotate_half(q, flipped) * sin), (k * cos) + (rotate_half(k, flipped) * sin)


class OlmoLayerNorm(nn.Module):
    """LayerNorm without any parameters."""

    def __init__(self, hidden_size):
        super().__init__()
        self.normalized_shape = (hidden_size,)

    def forward(self, hidden_states):
        orig_dtype = hidden_states.dtype
        return F.layer_norm(hidden_states.to(dtype=torch.float32), self.normalized_shape, None, None,
                            eps=LN_EPS).to(orig_dtype)


class OlmoRotaryEmbedding(nn.Module):
    def __init__(self, dim=HEAD_DIM, base=ROPE_THETA):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    @torch.no_grad()
    def forward(self, x, position_ids):
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


class OlmoAttention(nn.Module):
    def __init__(self, clip_v=True, flipped=False):
        super().__init__()
        self.clip_v = clip_v
        self.flipped = flipped
        self.q_proj = nn.Linear(HIDDEN, HEADS * HEAD_DIM, bias=False)
        self.k_proj = nn.Linear(HIDDEN, HEADS * HEAD_DIM, bias=False)
        self.v_proj = nn.Linear(HIDDEN, HEADS * HEAD_DIM, bias=False)
        self.o_proj = nn.Linear(HEADS * HEAD_DIM, HIDDEN, bias=False)

    def forward(self, hidden_states, position_embeddings):
        bsz, q_len, _ = hidden_states.shape
        query_states = self.q_proj(hidden_states)
        key_states = self.k_proj(hidden_states)
        value_states = self.v_proj(hidden_states)
        query_states.clamp_(min=-CLIP_QKV, max=CLIP_QKV)
        key_states.clamp_(min=-CLIP_QKV, max=CLIP_QKV)
        if self.clip_v:
            value_states.clamp_(min=-CLIP_QKV, max=CLIP_QKV)
        shape = (bsz, q_len, HEADS, HEAD_DIM)
        query_states = query_states.view(shape).transpose(1, 2)
        key_states = key_states.view(shape).transpose(1, 2)
        value_states = value_states.view(shape).transpose(1, 2)
        cos, sin = position_embeddings
        query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin,
                                                        flipped=self.flipped)
        attn = F.scaled_dot_product_attention(query_states, key_states, value_states, is_causal=True)
        attn = attn.transpose(1, 2).reshape(bsz, q_len, HIDDEN)
        return self.o_proj(attn)


class OlmoMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(HIDDEN, INTER, bias=False)
        self.up_proj = nn.Linear(HIDDEN, INTER, bias=False)
        self.down_proj = nn.Linear(INTER, HIDDEN, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class OlmoDecoderLayer(nn.Module):
    def __init__(self, clip_v=True, flipped=False):
        super().__init__()
        self.self_attn = OlmoAttention(clip_v, flipped)
        self.mlp = OlmoMLP()
        self.input_layernorm = OlmoLayerNorm(HIDDEN)
        self.post_attention_layernorm = OlmoLayerNorm(HIDDEN)

    def forward(self, hidden_states, position_embeddings):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = residual + self.self_attn(hidden_states, position_embeddings)
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        return residual + self.mlp(hidden_states)


class OlmoModel(nn.Module):
    def __init__(self, clip_v=True, flipped=False):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.ModuleList([OlmoDecoderLayer(clip_v, flipped) for _ in range(LAYERS)])
        self.norm = OlmoLayerNorm(HIDDEN)
        self.rotary_emb = OlmoRotaryEmbedding()

    def forward(self, input_ids):
        hidden_states = self.embed_tokens(input_ids)
        position_ids = torch.arange(input_ids.shape[1], device=input_ids.device).unsqueeze(0)
        position_embeddings = self.rotary_emb(hidden_states, position_ids)
        for layer in self.layers:
            hidden_states = layer(hidden_states, position_embeddings)
        return self.norm(hidden_states)


class OlmoForCausalLM(nn.Module):
    def __init__(self, clip_v=True, flipped=False):
        super().__init__()
        self.model = OlmoModel(clip_v, flipped)
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, input_ids):
        return self.lm_head(self.model(input_ids))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_olmo torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = OlmoForCausalLM(clip_v=bug != "torch_clip_v_unclipped", flipped=bug == "torch_rotate_half_sign")
    return m.eval()


def _ids():
    rng = np.random.default_rng(7)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 12, 64]
    return (output**2).mean()
