"""Hand-written port, torch side: a tiny Cohere (Command-R)-style decoder-only LM (written by "person B").

The same math as port_cohere_paddle.py, re-implemented by hand in the style of HF's Cohere code.
Sizes: vocab 64, hidden 32, 4 heads of 8, intermediate 64, 2 layers, layer_norm_eps 1e-5 (no
bias), rope theta 10000 on the full head dim, logit_scale 0.25, tied embeddings, sequence length
12, batch 2. Parallel block: out = x + self_attn(ln(x)) + mlp(ln(x)) with ONE input_layernorm.
Interleaved rotary: pairs (2i, 2i + 1) of each head, with inverse frequency theta^(-2i / 8).

Torch idioms on this side:
- root `CohereForCausalLM`: `model` (`CohereModel`: `embed_tokens`, `layers` = ModuleList of
  `CohereDecoderLayer`, `norm`, `rotary_emb`) and `lm_head` nn.Linear(32, 64, bias=False) whose
  weight IS model.embed_tokens.weight (tied; one parameter). logits = lm_head(h) * logit_scale
  (a plain float attribute).
- `CohereRotaryEmbedding` is called ONCE per forward by `CohereModel` with the position ids;
  from its non-persistent `inv_freq` buffer it builds freqs [1, T, 4] and repeat_interleave's
  them to [1, T, 8] (cos / sin duplicated per adjacent pair); the (cos, sin) tuple is passed to
  every layer as `position_embeddings`.
- `rotate_half` is the interleaved one: stack([-x[..., 1::2], x[..., ::2]], -1).flatten(-2);
  apply_rotary_pos_emb: q * cos + rotate_half(q) * sin (inline in the attention).
- `CohereAttention`: SEPARATE `q_proj`, `k_proj`, `v_proj`, `o_proj` (no bias); additive causal
  mask (full(-inf).triu(1)); softmax in float32.
- `CohereMLP`: `gate_proj`, `up_proj`, `down_proj` (no bias) and an `act_fn` nn.SiLU module:
  down(act(gate(x)) * up(x)).
- `CohereLayerNorm`: hand-written, weight only: (x - mean) * rsqrt(var + eps) * weight, the
  variance as the mean of squared deviations.
- `CohereDecoderLayer` registers `self_attn`, `mlp`, `input_layernorm`.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_ln_unbiased_var -> CohereLayerNorm takes the variance with Tensor.var (unbiased by
                           default, / 31 instead of / 32): every normalised value shrinks by
                           sqrt(31 / 32) ~ 0.984, in every norm
  torch_mlp_unnormed    -> CohereDecoderLayer calls the MLP on the residual stream before the
                           input_layernorm line (mlp(x) instead of mlp(ln(x)))
"""
import os

import numpy as np
import torch
from torch import nn

VOCAB, HIDDEN, N_HEADS, INTERMEDIATE, N_LAYERS = 64, 32, 4, 64, 2
LAYER_NORM_EPS, ROPE_THETA, LOGIT_SCALE = 1e-5, 10000.0, 0.25
BATCH, SEQ = 2, 12
OWN_BUGS = {"torch_ln_unbiased_var", "torch_mlp_unnormed"}
OTHER_BUGS = {"paddle_rope_half_split", "paddle_swiglu_bf16"}


class CohereLayerNorm(nn.Module):
    def __init__(self, hidden_size, eps=LAYER_NORM_EPS, unbiased=False):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps
        self.unbiased = unbiased

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        mean = hidden_states.mean(-1, keepdim=True)
        if self.unbiased:
            variance = hidden_states.var(-1, keepdim=True)
        else:
            variance = (hidden_states - mean).pow(2).mean(-1, keepdim=True)
        hidden_states = (hidden_states - mean) * torch.rsqrt(variance + self.variance_epsilon)
        hidden_states = self.weight.to(torch.float32) * hidden_states
        return hidden_states.to(input_dtype)


class CohereRotaryEmbedding(nn.Module):
    def __init__(self, dim, base=ROPE_THETA):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    @torch.no_grad()
    def forward(self, x, position_ids):
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)  # [1, T, 4]
        emb = torch.repeat_interleave(freqs, 2, dim=-1)  # [1, T, 8]
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


def rotate_half(x):
    x1 = x[..., ::2]
    x2 = x[..., 1::2]
    return torch.stack([-x2, x1], dim=-1).flatten(-2)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    dtype = q.dtype
    q, k = q.float(), k.float()
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed.to(dtype), k_embed.to(dtype)


class CohereAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.head_dim = HIDDEN // N_HEADS
        self.scaling = self.head_dim**-0.5
        self.q_proj = nn.Linear(HIDDEN, N_HEADS * self.head_dim, bias=False)
        self.k_proj = nn.Linear(HIDDEN, N_HEADS * self.head_dim, bias=False)
        self.v_proj = nn.Linear(HIDDEN, N_HEADS * self.head_dim, bias=False)
        self.o_proj = nn.Linear(N_HEADS * self.head_dim, HIDDEN, bias=False)

    def forward(self, hidden_states, position_embeddings):
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)
        query_states = self.q_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        cos, sin = position_embeddings
        query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)

        q_len = query_states.shape[-2]
        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) * self.scaling
        attn_weights = attn_weights + torch.full((q_len, q_len), float("-inf")).triu(1)
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)
        attn_output = torch.matmul(attn_weights, value_states).transpose(1, 2).contiguous()
        return self.o_proj(attn_output.reshape(*input_shape, -1))


class CohereMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(HIDDEN, INTERMEDIATE, bias=False)
        self.up_proj = nn.Linear(HIDDEN, INTERMEDIATE, bias=False)
        self.down_proj = nn.Linear(INTERMEDIATE, HIDDEN, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class CohereDecoderLayer(nn.Module):
    def __init__(self, unbiased=False, mlp_unnormed=False):
        super().__init__()
        self.mlp_unnormed = mlp_unnormed
        self.self_attn = CohereAttention()
        self.mlp = CohereMLP()
        self.input_layernorm = CohereLayerNorm(HIDDEN, unbiased=unbiased)

    def forward(self, hidden_states, position_embeddings):
        residual = hidden_states
        if self.mlp_unnormed:
            hidden_states_mlp = self.mlp(hidden_states)
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states_attention = self.self_attn(hidden_states, position_embeddings)
        if not self.mlp_unnormed:
            hidden_states_mlp = self.mlp(hidden_states)
        return residual + hidden_states_attention + hidden_states_mlp


class CohereModel(nn.Module):
    def __init__(self, unbiased=False, mlp_unnormed=False):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.ModuleList([CohereDecoderLayer(unbiased, mlp_unnormed) for _ in range(N_LAYERS)])
        self.norm = CohereLayerNorm(HIDDEN, unbiased=unbiased)
        self.rotary_emb = CohereRotaryEmbedding(HIDDEN // N_HEADS)

    def forward(self, input_ids):
        hidden_states = self.embed_tokens(input_ids)
        position_ids = torch.arange(input_ids.shape[1], device=input_ids.device).unsqueeze(0)
        position_embeddings = self.rotary_emb(hidden_states, position_ids)
        for decoder_layer in self.layers:
            hidden_states = decoder_layer(hidden_states, position_embeddings)
        return self.norm(hidden_states)


class CohereForCausalLM(nn.Module):
    def __init__(self, unbiased=False, mlp_unnormed=False):
        super().__init__()
        self.model = CohereModel(unbiased, mlp_unnormed)
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)
        self.lm_head.weight = self.model.embed_tokens.weight  # tie_word_embeddings
        self.logit_scale = LOGIT_SCALE

    def forward(self, input_ids):
        logits = self.lm_head(self.model(input_ids))
        return logits * self.logit_scale


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_cohere torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = CohereForCausalLM(unbiased=bug == "torch_ln_unbiased_var", mlp_unnormed=bug == "torch_mlp_unnormed")
    return m.eval()


def _ids():
    rng = np.random.default_rng(47)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # scaled logits [2, 12, 64]
    return (output**2).mean()
