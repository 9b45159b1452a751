"""Hand-written port, torch side: a tiny T5-style Transformer encoder with bucketed relative
position bias (written by "person B").

The same math as port_relbias_encoder_paddle.py, re-implemented by hand in the style of the
HF transformers T5 encoder: input `input_ids` [2, 12] (positional), vocab 64, width 32, 4 heads of
8, gated-GELU FFN hidden 64, 2 blocks, RMS-style T5LayerNorm (eps 1e-6), no 1/sqrt(d) in the
attention logits, relative position bias from 16 bidirectional buckets (max_distance 20) with the
table owned by block 0 and shared with block 1. Output: final_layer_norm hidden states [2, 12, 32].

Torch idioms on this side:
- root `T5TinyEncoder`: `shared` (nn.Embedding), `block` (ModuleList of `T5Block`),
  `final_layer_norm`. The root threads `position_bias` through the blocks: block 0 computes it,
  returns it, and the root passes it to block 1.
- `T5Block`: `layer` = ModuleList [`T5LayerSelfAttention`, `T5LayerFF`]; each sub-layer applies its
  own `layer_norm` and adds its residual.
- `T5Attention` (`SelfAttention`): ONE fused `qkv` Linear(32, 96, bias=False) (q | k | v rows),
  `o`, and, in block 0 only, `relative_attention_bias` = nn.Embedding(16, 4) ([buckets, heads]).
  The buckets come from a static method `_relative_position_bucket` (torch ops, HF style); the
  bias is computed in `compute_bias` inside the attention forward when no bias is passed in.
- `T5DenseGatedActDense` (`DenseReluDense`): ONE fused `wi` Linear(32, 128) (gate rows 0:64,
  linear rows 64:128), `wo`, and an `act` module nn.GELU(approximate="tanh") (HF's gelu_new).
- `T5LayerFF` registers `DenseReluDense` before `layer_norm` (the HF order).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_max_distance_default -> the attention that owns the table is built with HF's default
                                relative_attention_max_distance=128 instead of the model's 20, so
                                the log-spaced buckets of distances 6..10 move
  torch_gelu_exact           -> DenseReluDense's `act` is nn.GELU() (exact erf GELU) instead of
                                the tanh approximation (precision-level)
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB_SIZE, D_MODEL, NUM_HEADS, D_KV, D_FF, NUM_LAYERS = 64, 32, 4, 8, 64, 2
REL_NUM_BUCKETS, REL_MAX_DISTANCE, LN_EPS = 16, 20, 1e-6
BATCH, SEQ = 2, 12
OWN_BUGS = {"torch_max_distance_default", "torch_gelu_exact"}
OTHER_BUGS = {"paddle_bucket_direction_flipped", "paddle_norm_mean_sub"}


class T5LayerNorm(nn.Module):
    def __init__(self, hidden_size, eps=LN_EPS):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states


class T5Attention(nn.Module):
    def __init__(self, has_relative_attention_bias=False, relative_attention_max_distance=128):
        super().__init__()
        self.has_relative_attention_bias = has_relative_attention_bias
        self.n_heads, self.key_value_proj_dim = NUM_HEADS, D_KV
        self.inner_dim = NUM_HEADS * D_KV
        self.relative_attention_num_buckets = REL_NUM_BUCKETS
        self.relative_attention_max_distance = relative_attention_max_distance
        self.qkv = nn.Linear(D_MODEL, 3 * self.inner_dim, bias=False)
        self.o = nn.Linear(self.inner_dim, D_MODEL, bias=False)
        if self.has_relative_attention_bias:
            self.relative_attention_bias = nn.Embedding(REL_NUM_BUCKETS, NUM_HEADS)

    @staticmethod
    def _relative_position_bucket(relative_position, num_buckets=32, max_distance=128):
        num_buckets //= 2
        relative_buckets = (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
        max_exact = num_buckets // 2
        is_small = relative_position < max_exact
        relative_position_if_large = max_exact + (
            torch.log(relative_position.float() / max_exact)
            / math.log(max_distance / max_exact)
            * (num_buckets - max_exact)
        ).to(torch.long)
        relative_position_if_large = torch.min(
            relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1)
        )
        relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
        return relative_buckets

    def compute_bias(self, query_length, key_length, device=None):
        context_position = torch.arange(query_length, dtype=torch.long, device=device)[:, None]
        memory_position = torch.arange(key_length, dtype=torch.long, device=device)[None, :]
        relative_position = memory_position - context_position  # (query_length, key_length)
        relative_position_bucket = self._relative_position_bucket(
            relative_position,
            num_buckets=self.relative_attention_num_buckets,
            max_distance=self.relative_attention_max_distance,
        )
        values = self.relative_attention_bias(relative_position_bucket)  # (q, k, heads)
        return values.permute([2, 0, 1]).unsqueeze(0)  # (1, heads, q, k)

    def forward(self, hidden_states, position_bias=None):
        batch_size, seq_length = hidden_states.shape[:2]
        q, k, v = self.qkv(hidden_states).split(self.inner_dim, dim=-1)

        def shape(states):
            return states.view(batch_size, -1, self.n_heads, self.key_value_proj_dim).transpose(1, 2)

        q, k, v = shape(q), shape(k), shape(v)
        scores = torch.matmul(q, k.transpose(3, 2))
        if position_bias is None:
            position_bias = self.compute_bias(seq_length, seq_length, device=scores.device)
        scores = scores + position_bias
        attn_weights = F.softmax(scores.float(), dim=-1).type_as(scores)
        attn_output = torch.matmul(attn_weights, v).transpose(1, 2).contiguous()
        attn_output = self.o(attn_output.view(batch_size, -1, self.inner_dim))
        return attn_output, position_bias


class T5LayerSelfAttention(nn.Module):
    def __init__(self, has_relative_attention_bias=False, max_distance=REL_MAX_DISTANCE):
        super().__init__()
        self.SelfAttention = T5Attention(has_relative_attention_bias, relative_attention_max_distance=max_distance)
        self.layer_norm = T5LayerNorm(D_MODEL)

    def forward(self, hidden_states, position_bias=None):
        normed = self.layer_norm(hidden_states)
        attn_out, position_bias = self.SelfAttention(normed, position_bias=position_bias)
        return hidden_states + attn_out, position_bias


class T5DenseGatedActDense(nn.Module):
    def __init__(self, exact_gelu=False):
        super().__init__()
        self.wi = nn.Linear(D_MODEL, 2 * D_FF, bias=False)
        self.wo = nn.Linear(D_FF, D_MODEL, bias=False)
        self.act = nn.GELU() if exact_gelu else nn.GELU(approximate="tanh")

    def forward(self, hidden_states):
        hidden_gelu, hidden_linear = self.wi(hidden_states).chunk(2, dim=-1)
        return self.wo(self.act(hidden_gelu) * hidden_linear)


class T5LayerFF(nn.Module):
    def __init__(self, exact_gelu=False):
        super().__init__()
        self.DenseReluDense = T5DenseGatedActDense(exact_gelu)
        self.layer_norm = T5LayerNorm(D_MODEL)

    def forward(self, hidden_states):
        return hidden_states + self.DenseReluDense(self.layer_norm(hidden_states))


class T5Block(nn.Module):
    def __init__(self, has_relative_attention_bias=False, max_distance=REL_MAX_DISTANCE, exact_gelu=False):
        super().__init__()
        self.layer = nn.ModuleList([
            T5LayerSelfAttention(has_relative_attention_bias, max_distance),
            T5LayerFF(exact_gelu),
        ])

    def forward(self, hidden_states, position_bias=None):
        hidden_states, position_bias = self.layer[0](hidden_states, position_bias=position_bias)
        hidden_states = self.layer[1](hidden_states)
        return hidden_states, position_bias


class T5TinyEncoder(nn.Module):
    def __init__(self, default_max_distance=False, exact_gelu=False):
        super().__init__()
        self.shared = nn.Embedding(VOCAB_SIZE, D_MODEL)
        blocks = []
        for i in range(NUM_LAYERS):
            if i == 0 and default_max_distance:
                # the config's max distance was not passed on: T5Attention's default (128) is used
                blk = T5Block(has_relative_attention_bias=True, max_distance=128, exact_gelu=exact_gelu)
            else:
                blk = T5Block(has_relative_attention_bias=i == 0, exact_gelu=exact_gelu)
            blocks.append(blk)
        self.block = nn.ModuleList(blocks)
        self.final_layer_norm = T5LayerNorm(D_MODEL)

    def forward(self, input_ids):
        hidden_states = self.shared(input_ids)
        position_bias = None
        for layer_module in self.block:
            hidden_states, position_bias = layer_module(hidden_states, position_bias=position_bias)
        return self.final_layer_norm(hidden_states)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_relbias_encoder torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = T5TinyEncoder(default_max_distance=bug == "torch_max_distance_default", exact_gelu=bug == "torch_gelu_exact")
    return m.eval()


def _ids():
    return np.random.default_rng(33).integers(0, VOCAB_SIZE, (BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # final hidden states [2, 12, 32]
    return (output**2).mean()
