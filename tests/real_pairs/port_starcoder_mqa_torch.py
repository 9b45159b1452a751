"""Hand-written port, torch side: a tiny StarCoder / SantaCoder-style decoder with multi-query
attention (written by "person B").

The same math as port_starcoder_mqa_paddle.py, re-implemented by hand in the style of HF
transformers' GPTBigCodeForCausalLM: positional `input_ids` [2, 12] and keyword
`attention_mask` [2, 12] (row 1 left-padded by 3), logits [2, 12, 64]; vocab 64, width 32,
2 layers, 4 query heads of 8 with ONE key / value head of 8, learned positions (16), MLP 32 ->
128 -> 32 with GELU(tanh), LayerNorm eps 1e-5, final LayerNorm, untied head without bias.

Torch idioms on this side:
- root `GPTBigCodeForCausalLM`: `transformer` (`GPTBigCodeModel`) and `lm_head`
  nn.Linear(32, 64, bias=False).
- `GPTBigCodeModel` registers `wte`, `wpe`, `drop` (nn.Dropout, identity in eval), `h`
  (ModuleList of `GPTBigCodeBlock`), `ln_f`, then a non-persistent bool buffer `bias` (tril
  [16, 16], the causal table). Its forward computes position_ids = cumsum(mask) - 1 (pad
  positions filled with 1) inline, looks up wte + wpe, and builds ONE [B, L, 1, L] bool mask
  (causal & key-not-padding) passed to every block.
- `GPTBigCodeBlock`: `ln_1`, `attn`, `ln_2`, `mlp`; block(hidden_states, attention_mask).
- `GPTBigCodeAttention` (multi-query): ONE packed `c_attn` Linear(32, 48) (rows 0:32 = q,
  32:40 = k, 40:48 = v, with bias), `c_proj`, `resid_dropout`; the query is reshaped to
  [B, L * 4, 8] and multiplied against the single key with torch.baddbmm (beta=0); GPTBigCode's
  scale_attention_softmax_in_fp32 path: alpha = 1 / (layer_idx + 1) / sqrt(8), and the masked
  softmax helper multiplies by `unscale` = layer_idx + 1 again before torch.where(mask, x,
  finfo.min) and the float32 softmax.
- `GPTBigCodeMLP`: `c_fc`, `act` (nn.GELU(approximate="tanh")), `c_proj`, `dropout`.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_softmax_unscale_missing  -> the masked-softmax helper forgets to multiply by `unscale`,
                                    so layer i's scores stay divided by (i + 1): layer 0 is
                                    unchanged, layer 1 runs its softmax at temperature 2
  torch_positions_ignore_padding -> the body uses position_ids = arange(L) for every row,
                                    ignoring the left padding (the no-mask fast path)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB_SIZE, N_EMBD, N_LAYER, N_POSITIONS = 64, 32, 2, 16
N_HEAD = 4
HEAD_DIM = N_EMBD // N_HEAD
LAYER_NORM_EPSILON = 1e-5
BATCH, SEQ, N_PAD = 2, 12, 3
OWN_BUGS = {"torch_softmax_unscale_missing", "torch_positions_ignore_padding"}
OTHER_BUGS = {"paddle_ln_eps_1e6", "paddle_pad_mask_query_axis"}


def upcast_masked_softmax(x, mask, mask_value, scale, softmax_dtype, apply_scale=True):
    input_dtype = x.dtype
    x = x.to(softmax_dtype)
    if apply_scale:
        x = x * scale
    x = torch.where(mask, x, mask_value)
    return F.softmax(x, dim=-1).to(input_dtype)


class GPTBigCodeAttention(nn.Module):
    def __init__(self, layer_idx, unscale_missing=False):
        super().__init__()
        self.layer_idx = layer_idx
        self.unscale_missing = unscale_missing
        self.embed_dim = N_EMBD
        self.num_heads = N_HEAD
        self.head_dim = HEAD_DIM
        self.kv_dim = HEAD_DIM  # multi-query: one key / value head
        self.scale_attention_softmax_in_fp32 = True
        self.c_attn = nn.Linear(self.embed_dim, self.embed_dim + 2 * self.kv_dim)
        self.c_proj = nn.Linear(self.embed_dim, self.embed_dim)
        self.resid_dropout = nn.Dropout(0.1)

    def _attn(self, query, key, value, attention_mask):
        dtype = query.dtype
        softmax_dtype = torch.float32
        unscale = self.layer_idx + 1 if self.scale_attention_softmax_in_fp32 else 1
        scale_factor = unscale**-1
        scale_factor /= self.head_dim**0.5
        batch_size, query_length = query.shape[0], query.shape[1]
        key_length = key.size(-1)
        # [B, L, H * D] -> [B, L * H, D]; key is already [B, D, L]
        query = query.reshape(batch_size, query_length * self.num_heads, self.head_dim)
        attn_weights = torch.empty(batch_size, query_length * self.num_heads, key_length, dtype=dtype)
        attn_weights = torch.baddbmm(attn_weights, query, key, beta=0, alpha=scale_factor)
        attn_weights = attn_weights.view(batch_size, query_length, self.num_heads, key_length)
        mask_value = torch.full([], torch.finfo(softmax_dtype).min, dtype=softmax_dtype)
        attn_weights = upcast_masked_softmax(attn_weights, attention_mask, mask_value, unscale, softmax_dtype,
                                             apply_scale=not self.unscale_missing)
        attn_weights = attn_weights.view(batch_size, query_length * self.num_heads, key_length)
        attn_output = torch.bmm(attn_weights, value)  # [B, L * H, D]
        return attn_output.view(batch_size, query_length, self.num_heads * self.head_dim)

    def forward(self, hidden_states, attention_mask):
        query, key_value = self.c_attn(hidden_states).split((self.embed_dim, 2 * self.kv_dim), dim=2)
        key, value = key_value.split((self.head_dim, self.head_dim), dim=-1)
        attn_output = self._attn(query, key.transpose(-1, -2), value, attention_mask)
        return self.resid_dropout(self.c_proj(attn_output))


class GPTBigCodeMLP(nn.Module):
    def __init__(self, intermediate_size):
        super().__init__()
        self.c_fc = nn.Linear(N_EMBD, intermediate_size)
        self.c_proj = nn.Linear(intermediate_size, N_EMBD)
        self.act = nn.GELU(approximate="tanh")
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden_states):
        return self.dropout(self.c_proj(self.act(self.c_fc(hidden_states))))


class GPTBigCodeBlock(nn.Module):
    def __init__(self, layer_idx, unscale_missing=False):
        super().__init__()
        self.ln_1 = nn.LayerNorm(N_EMBD, eps=LAYER_NORM_EPSILON)
        self.attn = GPTBigCodeAttention(layer_idx, unscale_missing)
        self.ln_2 = nn.LayerNorm(N_EMBD, eps=LAYER_NORM_EPSILON)
        self.mlp = GPTBigCodeMLP(4 * N_EMBD)

    def forward(self, hidden_states, attention_mask):
        residual = hidden_states
        hidden_states = self.attn(self.ln_1(hidden_states), attention_mask)
        hidden_states = hidden_states + residual
        residual = hidden_states
        feed_forward_hidden_states = self.mlp(self.ln_2(hidden_states))
        return residual + feed_forward_hidden_states


class GPTBigCodeModel(nn.Module):
    def __init__(self, unscale_missing=False, positions_ignore_padding=False):
        super().__init__()
        self.positions_ignore_padding = positions_ignore_padding
        self.wte = nn.Embedding(VOCAB_SIZE, N_EMBD)
        self.wpe = nn.Embedding(N_POSITIONS, N_EMBD)
        self.drop = nn.Dropout(0.1)
        self.h = nn.ModuleList([GPTBigCodeBlock(i, unscale_missing) for i in range(N_LAYER)])
        self.ln_f = nn.LayerNorm(N_EMBD, eps=LAYER_NORM_EPSILON)
        self.register_buffer("bias", torch.tril(torch.ones((N_POSITIONS, N_POSITIONS), dtype=torch.bool)),
                             persistent=False)

    def forward(self, input_ids, attention_mask=None):
        batch_size, query_length = input_ids.shape
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        if self.positions_ignore_padding:
            position_ids = torch.arange(query_length, dtype=torch.long).unsqueeze(0).expand(batch_size, -1)
        else:
            position_ids = attention_mask.long().cumsum(-1) - 1
            position_ids.masked_fill_(attention_mask == 0, 1)
        self_attention_mask = self.bias[None, :query_length, :query_length]
        self_attention_mask = self_attention_mask * attention_mask.view(batch_size, 1, -1).to(
            dtype=torch.bool, device=self_attention_mask.device)
        self_attention_mask = self_attention_mask.unsqueeze(2)  # [B, L, 1, L]: broadcast over heads
        hidden_states = self.wte(input_ids) + self.wpe(position_ids)
        hidden_states = self.drop(hidden_states)
        for block in self.h:
            hidden_states = block(hidden_states, self_attention_mask)
        return self.ln_f(hidden_states)


class GPTBigCodeForCausalLM(nn.Module):
    def __init__(self, unscale_missing=False, positions_ignore_padding=False):
        super().__init__()
        self.transformer = GPTBigCodeModel(unscale_missing, positions_ignore_padding)
        self.lm_head = nn.Linear(N_EMBD, VOCAB_SIZE, bias=False)

    def forward(self, input_ids, attention_mask=None):
        return self.lm_head(self.transformer(input_ids, attention_mask=attention_mask))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_starcoder_mqa torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = GPTBigCodeForCausalLM(unscale_missing=bug == "torch_softmax_unscale_missing",
                              positions_ignore_padding=bug == "torch_positions_ignore_padding")
    return m.eval()


def _batch():
    rng = np.random.default_rng(37)
    ids = rng.integers(1, VOCAB_SIZE, (BATCH, SEQ)).astype("int64")
    mask = np.ones((BATCH, SEQ), dtype="int64")
    ids[1, :N_PAD] = 0
    mask[1, :N_PAD] = 0
    return ids, mask


def inputs():
    ids, mask = _batch()
    return (torch.from_numpy(ids),), {"attention_mask": torch.from_numpy(mask)}


def loss(output):
    # logits [2, 12, 64]
    return (output**2).mean()
