"""Hand-written port, torch side: a tiny Nemotron-style decoder LM (written by "person B").

The same math as port_nemotron_paddle.py, re-implemented by hand in the style of Megatron-core's
GPTModel: vocab 64, hidden 32, 4 query heads of 8 in 2 query groups (GQA, one kv head per
group), LayerNorm eps 1e-5 with bias, partial rotary (rotary_percent 0.5: the first 4 of 8 dims
of a head, half-split pairs, base 10000), squared-ReLU MLP 32 -> 64 -> 32 without gate or bias,
untied output layer. Input: positional `input_ids` [2, 10]; output logits [2, 10, 64].

Torch idioms on this side:
- SEQUENCE-FIRST activations: the root transposes the embedding output to [L, B, C]; every
  layer, norm and linear inside `decoder` sees [L, B, C]; the logits are transposed back to
  [B, L, V] at the end of the root forward.
- root `GPTModel` registers `word_embeddings` nn.Embedding, `rotary_pos_emb` (`RotaryEmbedding`,
  called ONCE per forward by the root with the sequence length; returns the angle table
  emb [L, 1, 1, 4] = cat(freqs, freqs)), `decoder` (`TransformerBlock`: `layers` ModuleList +
  `final_layernorm`, called with (hidden, rotary_pos_emb)), `output_layer` Linear(32, 64).
- the norms are PLAIN nn.LayerNorm(32, eps=1e-5): their weight holds the applied scale directly
  (Nemotron's w - 1 storage exists only on the paddle side).
- `TransformerLayer`: `input_layernorm`, `self_attention`, `pre_mlp_layernorm`, `mlp`.
- `SelfAttention`: ONE fused `linear_qkv` Linear(32, 64, bias=False) in Megatron's GROUPED
  layout: for each of the 2 query groups, 32 rows [q heads of the group (2 x 8) | k (8) | v (8)];
  the output is viewed [L, B, 2, 32] and split [16, 8, 8]; rotary is applied inline from the
  angle table (cos / sin computed in the layer), kv heads are expanded with repeat_interleave,
  F.scaled_dot_product_attention(is_causal=True), then `linear_proj` Linear(32, 32, bias=False).
- `MLP`: `linear_fc1` Linear(32, 64), `activation_func` (`SquaredReLU` module), `linear_fc2`
  Linear(64, 32), no biases.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_gqa_tile     -> the kv heads are expanded with .repeat (tiling: query head h reads kv
                        head h % 2) instead of repeat_interleave (h // 2)
  torch_sqrelu_order -> SquaredReLU computes relu(x^2) (= x^2) instead of relu(x)^2
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB_SIZE, HIDDEN_SIZE, NUM_ATTENTION_HEADS, NUM_QUERY_GROUPS, FFN_HIDDEN_SIZE, NUM_LAYERS = 64, 32, 4, 2, 64, 2
KV_CHANNELS = HIDDEN_SIZE // NUM_ATTENTION_HEADS
ROTARY_PERCENT, ROTARY_BASE, LAYERNORM_EPSILON = 0.5, 10000, 1e-5
BATCH, SEQ = 2, 10
OWN_BUGS = {"torch_gqa_tile", "torch_sqrelu_order"}
OTHER_BUGS = {"paddle_rope_dim_full", "paddle_ln_eps_1e6"}


class RotaryEmbedding(nn.Module):
    def __init__(self, kv_channels, rotary_percent, rotary_base=ROTARY_BASE):
        super().__init__()
        dim = int(kv_channels * rotary_percent)
        inv_freq = 1.0 / (rotary_base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, max_seq_len):
        seq = torch.arange(max_seq_len, dtype=self.inv_freq.dtype)
        freqs = torch.outer(seq, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb[:, None, None, :]  # [L, 1, 1, rot_dim]


def _rotate_half(x):
    x1, x2 = torch.chunk(x, 2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(t, freqs):
    rot_dim = freqs.shape[-1]
    t, t_pass = t[..., :rot_dim], t[..., rot_dim:]
    t = t * freqs.cos() + _rotate_half(t) * freqs.sin()
    return torch.cat((t, t_pass), dim=-1)


class SquaredReLU(nn.Module):
    def __init__(self, wrong_order=False):
        super().__init__()
        self.wrong_order = wrong_order

    def forward(self, x):
        if self.wrong_order:
            return F.relu(torch.pow(x, 2))
        return torch.pow(F.relu(x), 2)


class MLP(nn.Module):
    def __init__(self, sqrelu_wrong_order=False):
        super().__init__()
        self.linear_fc1 = nn.Linear(HIDDEN_SIZE, FFN_HIDDEN_SIZE, bias=False)
        self.activation_func = SquaredReLU(sqrelu_wrong_order)
        self.linear_fc2 = nn.Linear(FFN_HIDDEN_SIZE, HIDDEN_SIZE, bias=False)

    def forward(self, hidden_states):
        return self.linear_fc2(self.activation_func(self.linear_fc1(hidden_states)))


class SelfAttention(nn.Module):
    def __init__(self, gqa_tile=False):
        super().__init__()
        self.np, self.ng, self.hn = NUM_ATTENTION_HEADS, NUM_QUERY_GROUPS, KV_CHANNELS
        self.gqa_tile = gqa_tile
        self.linear_qkv = nn.Linear(HIDDEN_SIZE, (self.np + 2 * self.ng) * self.hn, bias=False)
        self.linear_proj = nn.Linear(self.np * self.hn, HIDDEN_SIZE, bias=False)

    def forward(self, hidden_states, rotary_pos_emb):
        sq, b, _ = hidden_states.shape
        per_group = self.np // self.ng
        mixed = self.linear_qkv(hidden_states).view(sq, b, self.ng, (per_group + 2) * self.hn)
        query, key, value = torch.split(mixed, [per_group * self.hn, self.hn, self.hn], dim=3)
        query = query.reshape(sq, b, self.np, self.hn)  # [L, B, heads, hn]
        query = apply_rotary_pos_emb(query, rotary_pos_emb)
        key = apply_rotary_pos_emb(key, rotary_pos_emb)  # [L, B, groups, hn]
        if self.gqa_tile:
            key = key.repeat(1, 1, per_group, 1)
            value = value.repeat(1, 1, per_group, 1)
        else:
            key = key.repeat_interleave(per_group, dim=2)
            value = value.repeat_interleave(per_group, dim=2)
        q, k, v = (t.permute(1, 2, 0, 3) for t in (query, key, value))  # [B, heads, L, hn]
        ctx = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        ctx = ctx.permute(2, 0, 1, 3).reshape(sq, b, self.np * self.hn)
        return self.linear_proj(ctx)


class TransformerLayer(nn.Module):
    def __init__(self, gqa_tile=False, sqrelu_wrong_order=False):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(HIDDEN_SIZE, eps=LAYERNORM_EPSILON)
        self.self_attention = SelfAttention(gqa_tile)
        self.pre_mlp_layernorm = nn.LayerNorm(HIDDEN_SIZE, eps=LAYERNORM_EPSILON)
        self.mlp = MLP(sqrelu_wrong_order)

    def forward(self, hidden_states, rotary_pos_emb):
        hidden_states = hidden_states + self.self_attention(self.input_layernorm(hidden_states), rotary_pos_emb)
        return hidden_states + self.mlp(self.pre_mlp_layernorm(hidden_states))


class TransformerBlock(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.layers = nn.ModuleList([TransformerLayer(**kw) for _ in range(NUM_LAYERS)])
        self.final_layernorm = nn.LayerNorm(HIDDEN_SIZE, eps=LAYERNORM_EPSILON)

    def forward(self, hidden_states, rotary_pos_emb):
        for layer in self.layers:
            hidden_states = layer(hidden_states, rotary_pos_emb)
        return self.final_layernorm(hidden_states)


class GPTModel(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB_SIZE, HIDDEN_SIZE)
        self.rotary_pos_emb = RotaryEmbedding(KV_CHANNELS, ROTARY_PERCENT)
        self.decoder = TransformerBlock(**kw)
        self.output_layer = nn.Linear(HIDDEN_SIZE, VOCAB_SIZE, bias=False)

    def forward(self, input_ids):
        hidden_states = self.word_embeddings(input_ids).transpose(0, 1).contiguous()  # [L, B, C]
        rotary_pos_emb = self.rotary_pos_emb(hidden_states.shape[0])
        hidden_states = self.decoder(hidden_states, rotary_pos_emb)
        return self.output_layer(hidden_states).transpose(0, 1)  # [B, L, V]


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_nemotron torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = GPTModel(gqa_tile=bug == "torch_gqa_tile", sqrelu_wrong_order=bug == "torch_sqrelu_order")
    return m.eval()


def _ids():
    return np.random.default_rng(61).integers(0, VOCAB_SIZE, (BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 10, 64]
    return (output**2).mean()
