"""Hand-written port, torch side: a tiny Gemma-style decoder LM (written by "person B").

The same math as port_gemma_paddle.py, re-implemented by hand in the style of HF transformers'
GemmaForCausalLM mixed with google's gemma_pytorch: positional `input_ids` [2, 12], logits
[2, 12, 64]; vocab 64, hidden 32, 2 layers, 4 query heads / 2 kv heads of head_dim 16, GeGLU
hidden 64 with gelu(tanh), RMSNorm eps 1e-6, rotary base 10000 (half-split), causal, embedding
scaled by sqrt(32), head tied to the embedding.

Torch idioms on this side:
- root `GemmaForCausalLM`: `model` (`GemmaModel`) and `lm_head` nn.Linear(32, 64, bias=False)
  whose `weight` IS `model.embed_tokens.weight` (assigned after construction, so
  named_parameters lists it once, as `model.embed_tokens.weight`).
- `GemmaModel` registers `embed_tokens` (nn.Embedding), `layers` (ModuleList of
  `GemmaDecoderLayer`), `norm`, then a non-persistent COMPLEX buffer `freqs_cis` [16, 8]
  (complex64, gemma_pytorch's precompute_freqs_cis); its forward looks the ids up, multiplies
  by a normalizer sqrt(32) INLINE, and passes freqs_cis[:L] and an additive causal mask
  (full(-2.3819763e38).triu(1), gemma_pytorch's mask value) to every layer.
- `GemmaRMSNorm` stores the FULL scale: `weight` is initialised to ones and the forward is
  x / sqrt(mean(x^2) + eps) * weight (a Llama-style norm; the checkpoint converter adds the 1).
- `GemmaDecoderLayer`: `input_layernorm`, `self_attn`, `post_attention_layernorm`, `mlp`.
- `GemmaAttention`: ONE packed `qkv_proj` Linear(32, 128) (rows 0:64 = q, 64:96 = k,
  96:128 = v), `o_proj`; q is multiplied by `scaling` = head_dim ** -0.5 BEFORE the product;
  rotary through torch.view_as_complex on the (first half, second half) pairs; kv heads
  repeated with torch.repeat_interleave on the head axis; softmax in float32.
- `GemmaMLP`: separate `gate_proj`, `up_proj`, `down_proj`; the gelu(tanh) is inline
  F.gelu(..., approximate="tanh").

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_norm_plus_one_full_scale -> GemmaRMSNorm applies (1 + weight) as in the original Gemma
                                    code although this side stores the FULL scale (the +1 is
                                    applied twice)
  torch_gelu_exact               -> GemmaMLP uses F.gelu(gate) with the default exact erf GELU
                                    instead of the tanh approximation (the Gemma "hidden_act
                                    gelu" ambiguity)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB_SIZE, HIDDEN_SIZE, NUM_LAYERS = 64, 32, 2
NUM_HEADS, NUM_KV_HEADS, HEAD_DIM = 4, 2, 16
INTERMEDIATE = 64
EPS, THETA, MAX_POS = 1e-6, 10000.0, 16
BATCH, SEQ = 2, 12
OWN_BUGS = {"torch_norm_plus_one_full_scale", "torch_gelu_exact"}
OTHER_BUGS = {"paddle_embed_scale_head_dim", "paddle_attn_scale_hidden_heads"}


def precompute_freqs_cis(dim, end, theta=THETA):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    return torch.polar(torch.ones_like(freqs), freqs)  # complex64 [end, dim / 2]


def apply_rotary_emb(x, freqs_cis):
    """x [B, L, H, D]; pairs (x[..., i], x[..., i + D/2]) rotate as one complex number."""
    x_ = torch.view_as_complex(torch.stack(torch.chunk(x.transpose(1, 2).float(), 2, dim=-1), dim=-1))
    x_out = torch.view_as_real(x_ * freqs_cis).type_as(x)
    x_out = torch.cat(torch.chunk(x_out, 2, dim=-1), dim=-2)
    x_out = x_out.reshape(x_out.shape[0], x_out.shape[1], x_out.shape[2], -1).transpose(1, 2)
    return x_out


class GemmaRMSNorm(nn.Module):
    def __init__(self, dim, eps=EPS, plus_one=False):
        super().__init__()
        self.eps = eps
        self.plus_one = plus_one
        self.weight = nn.Parameter(torch.ones(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(x.float())
        if self.plus_one:
            output = output * (1.0 + self.weight.float())
        else:
            output = output * self.weight.float()
        return output.type_as(x)


class GemmaAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.num_queries_per_kv = NUM_HEADS // NUM_KV_HEADS
        self.q_size = NUM_HEADS * HEAD_DIM
        self.kv_size = NUM_KV_HEADS * HEAD_DIM
        self.scaling = HEAD_DIM**-0.5
        self.qkv_proj = nn.Linear(HIDDEN_SIZE, self.q_size + 2 * self.kv_size, bias=False)
        self.o_proj = nn.Linear(self.q_size, HIDDEN_SIZE, bias=False)

    def forward(self, hidden_states, freqs_cis, mask):
        bsz, seq_len, _ = hidden_states.shape
        qkv = self.qkv_proj(hidden_states)
        xq, xk, xv = qkv.split([self.q_size, self.kv_size, self.kv_size], dim=-1)
        xq = xq.view(bsz, seq_len, NUM_HEADS, HEAD_DIM)
        xk = xk.view(bsz, seq_len, NUM_KV_HEADS, HEAD_DIM)
        xv = xv.view(bsz, seq_len, NUM_KV_HEADS, HEAD_DIM)
        xq = apply_rotary_emb(xq, freqs_cis)
        xk = apply_rotary_emb(xk, freqs_cis)
        key = torch.repeat_interleave(xk, self.num_queries_per_kv, dim=2)
        value = torch.repeat_interleave(xv, self.num_queries_per_kv, dim=2)
        q = xq.transpose(1, 2) * self.scaling  # [B, H, L, D]
        k = key.transpose(1, 2)
        v = value.transpose(1, 2)
        scores = torch.matmul(q, k.transpose(2, 3)) + mask
        scores = F.softmax(scores.float(), dim=-1).type_as(q)
        output = torch.matmul(scores, v)
        output = output.transpose(1, 2).contiguous().view(bsz, seq_len, -1)
        return self.o_proj(output)


class GemmaMLP(nn.Module):
    def __init__(self, exact_gelu=False):
        super().__init__()
        self.exact_gelu = exact_gelu
        self.gate_proj = nn.Linear(HIDDEN_SIZE, INTERMEDIATE, bias=False)
        self.up_proj = nn.Linear(HIDDEN_SIZE, INTERMEDIATE, bias=False)
        self.down_proj = nn.Linear(INTERMEDIATE, HIDDEN_SIZE, bias=False)

    def forward(self, x):
        gate = self.gate_proj(x)
        gate = F.gelu(gate) if self.exact_gelu else F.gelu(gate, approximate="tanh")
        return self.down_proj(gate * self.up_proj(x))


class GemmaDecoderLayer(nn.Module):
    def __init__(self, plus_one=False, exact_gelu=False):
        super().__init__()
        self.input_layernorm = GemmaRMSNorm(HIDDEN_SIZE, plus_one=plus_one)
        self.self_attn = GemmaAttention()
        self.post_attention_layernorm = GemmaRMSNorm(HIDDEN_SIZE, plus_one=plus_one)
        self.mlp = GemmaMLP(exact_gelu)

    def forward(self, hidden_states, freqs_cis, mask):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = self.self_attn(hidden_states, freqs_cis, mask)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        return residual + hidden_states


class GemmaModel(nn.Module):
    def __init__(self, plus_one=False, exact_gelu=False):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB_SIZE, HIDDEN_SIZE)
        self.layers = nn.ModuleList([GemmaDecoderLayer(plus_one, exact_gelu) for _ in range(NUM_LAYERS)])
        self.norm = GemmaRMSNorm(HIDDEN_SIZE, plus_one=plus_one)
        self.register_buffer("freqs_cis", precompute_freqs_cis(HEAD_DIM, MAX_POS), persistent=False)

    def forward(self, input_ids):
        seq_len = input_ids.shape[1]
        hidden_states = self.embed_tokens(input_ids)
        normalizer = torch.tensor(HIDDEN_SIZE**0.5, dtype=hidden_states.dtype)
        hidden_states = hidden_states * normalizer
        freqs_cis = self.freqs_cis[:seq_len]
        mask = torch.full((1, 1, seq_len, seq_len), -2.3819763e38, dtype=hidden_states.dtype).triu(diagonal=1)
        for layer in self.layers:
            hidden_states = layer(hidden_states, freqs_cis, mask)
        return self.norm(hidden_states)


class GemmaForCausalLM(nn.Module):
    def __init__(self, plus_one=False, exact_gelu=False):
        super().__init__()
        self.model = GemmaModel(plus_one, exact_gelu)
        self.lm_head = nn.Linear(HIDDEN_SIZE, VOCAB_SIZE, bias=False)
        self.lm_head.weight = self.model.embed_tokens.weight  # tied

    def forward(self, input_ids):
        return self.lm_head(self.model(input_ids))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_gemma torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = GemmaForCausalLM(plus_one=bug == "torch_norm_plus_one_full_scale", exact_gelu=bug == "torch_gelu_exact")
    return m.eval()


def _ids():
    rng = np.random.default_rng(31)
    return rng.integers(0, VOCAB_SIZE, (BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 12, 64]
    return (output**2).mean()

