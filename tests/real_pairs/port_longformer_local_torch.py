"""Hand-written port, torch side: a tiny Longformer-style encoder with sliding-window + global attention (written by "person B").

The same math as port_longformer_local_paddle.py, re-implemented by hand in the style of the
Hugging Face Longformer: inputs `input_ids` [2, 16] and `global_attention_mask` [2, 16]
(positional; 1 on token 0 and on token 9 / 12 of rows 0 / 1), output the last hidden states
[2, 16, 32]. Window w = 3 on each side, 4 heads of 8, 2 post-LN layers, LayerNorm eps 1e-12.

Torch idioms on this side:
- root `LongformerModel`: `embeddings` (`LongformerEmbeddings`: `word_embeddings`,
  `position_embeddings`, `LayerNorm`, `dropout`) and `encoder` (`LongformerEncoder` with `layer`,
  a ModuleList of `LongformerLayer`).
- `LongformerLayer`: `attention` (`LongformerAttention`: `self` = `LongformerSelfAttention`,
  `output` = `LongformerSelfOutput` with dense + residual + LayerNorm), `intermediate` (dense +
  `intermediate_act_fn` nn.GELU module), `output` (dense + residual + LayerNorm).
- `LongformerSelfAttention`: SEPARATE local `query`, `key`, `value` nn.Linear(32, 32), then
  `global_attn` (`GlobalAttention`, a module of its own holding ONE PACKED `qkv_global`
  nn.Linear(32, 96), rows [q | k | v]). Local attention is computed on UNFOLDED windows: keys /
  values are padded by w zeros on both sides of the sequence and unfolded into [B, 16, H, D, 7];
  a window slot is valid if it is inside the sequence and not a global token (the global keys
  are scored separately, [B, 16, H, G], and concatenated before the softmax, HF style). The
  global indices are taken from the mask with nonzero() (the same count G = 2 in every row). The
  global module returns the G global rows, which are written over the local result by index.
  The module returns the context BEFORE the output dense (which lives in `attention.output`).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_global_no_scale     -> GlobalAttention forgets to divide the global queries by sqrt(8)
  torch_unfold_pad_unmasked -> the window-validity mask is built as ~pad(is_global, value=False)
                               instead of pad(~is_global, value=False): the zero pad slots at
                               the sequence ends count as valid keys (score 0, value 0)
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB_SIZE, MAX_POSITIONS, HIDDEN_SIZE, NUM_HEADS, INTERMEDIATE = 50, 16, 32, 4, 64
ATTENTION_WINDOW = 6  # HF convention: the full window, w = 3 on each side
NUM_LAYERS = 2
LAYER_NORM_EPS = 1e-12
BATCH = 2
GLOBAL_TOKENS = ((0, 9), (0, 12))
OWN_BUGS = {"torch_global_no_scale", "torch_unfold_pad_unmasked"}
OTHER_BUGS = {"paddle_band_off_by_one", "paddle_emb_ln_default_eps"}


class LongformerEmbeddings(nn.Module):
    def __init__(self):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB_SIZE, HIDDEN_SIZE)
        self.position_embeddings = nn.Embedding(MAX_POSITIONS, HIDDEN_SIZE)
        self.LayerNorm = nn.LayerNorm(HIDDEN_SIZE, eps=LAYER_NORM_EPS)
        self.dropout = nn.Dropout(0.1)

    def forward(self, input_ids):
        position_ids = torch.arange(input_ids.shape[1], device=input_ids.device).unsqueeze(0)
        emb = self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
        return self.dropout(self.LayerNorm(emb))


class GlobalAttention(nn.Module):
    def __init__(self, no_scale=False):
        super().__init__()
        self.num_heads, self.head_dim = NUM_HEADS, HIDDEN_SIZE // NUM_HEADS
        self.no_scale = no_scale
        self.qkv_global = nn.Linear(HIDDEN_SIZE, 3 * HIDDEN_SIZE)

    def forward(self, hidden_states, global_idx):
        bsz, seq_len, _ = hidden_states.shape
        q, k, v = self.qkv_global(hidden_states).view(bsz, seq_len, 3, self.num_heads, self.head_dim).unbind(2)
        batch_idx = torch.arange(bsz, device=hidden_states.device).unsqueeze(1)
        q = q[batch_idx, global_idx]  # [B, G, H, D]
        if not self.no_scale:
            q = q / math.sqrt(self.head_dim)
        scores = torch.einsum("bghd,blhd->bhgl", q, k)
        probs = scores.softmax(dim=-1)
        out = torch.einsum("bhgl,blhd->bghd", probs, v)
        return out.reshape(bsz, global_idx.shape[1], -1)  # [B, G, C]


class LongformerSelfAttention(nn.Module):
    def __init__(self, no_scale=False, pad_unmasked=False):
        super().__init__()
        self.num_heads, self.head_dim = NUM_HEADS, HIDDEN_SIZE // NUM_HEADS
        self.one_sided_attn_window_size = ATTENTION_WINDOW // 2
        self.pad_unmasked = pad_unmasked
        self.query = nn.Linear(HIDDEN_SIZE, HIDDEN_SIZE)
        self.key = nn.Linear(HIDDEN_SIZE, HIDDEN_SIZE)
        self.value = nn.Linear(HIDDEN_SIZE, HIDDEN_SIZE)
        self.global_attn = GlobalAttention(no_scale)

    def forward(self, hidden_states, is_index_global_attn):
        bsz, seq_len, embed_dim = hidden_states.shape
        w = self.one_sided_attn_window_size
        shape = (bsz, seq_len, self.num_heads, self.head_dim)
        q = (self.query(hidden_states) / math.sqrt(self.head_dim)).view(shape)
        k = self.key(hidden_states).view(shape)
        v = self.value(hidden_states).view(shape)
        # sliding windows: [B, L, H, D, 2w+1], slot s of query i holds key i - w + s
        k_win = F.pad(k, (0, 0, 0, 0, w, w)).unfold(1, 2 * w + 1, 1)
        v_win = F.pad(v, (0, 0, 0, 0, w, w)).unfold(1, 2 * w + 1, 1)
        local_scores = torch.einsum("blhd,blhdw->blhw", q, k_win)
        if self.pad_unmasked:
            valid = ~F.pad(is_index_global_attn, (w, w), value=False)
        else:
            valid = F.pad(~is_index_global_attn, (w, w), value=False)
        valid = valid.unfold(1, 2 * w + 1, 1)  # [B, L, 2w+1]
        local_scores = local_scores.masked_fill(~valid[:, :, None, :], float("-inf"))
        # every query also sees the global keys (local projections)
        global_idx = is_index_global_attn.nonzero()[:, 1].view(bsz, -1)  # [B, G]
        batch_idx = torch.arange(bsz, device=hidden_states.device).unsqueeze(1)
        k_glob, v_glob = k[batch_idx, global_idx], v[batch_idx, global_idx]  # [B, G, H, D]
        global_key_scores = torch.einsum("blhd,bghd->blhg", q, k_glob)
        n_glob = global_idx.shape[1]
        probs = torch.cat([global_key_scores, local_scores], dim=-1).softmax(dim=-1)
        attn_output = torch.einsum("blhg,bghd->blhd", probs[..., :n_glob], v_glob)
        attn_output = attn_output + torch.einsum("blhw,blhdw->blhd", probs[..., n_glob:], v_win)
        attn_output = attn_output.reshape(bsz, seq_len, embed_dim)
        # global queries: own module, rows written over the local result
        attn_output[batch_idx, global_idx] = self.global_attn(hidden_states, global_idx)
        return attn_output


class LongformerSelfOutput(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(HIDDEN_SIZE, HIDDEN_SIZE)
        self.LayerNorm = nn.LayerNorm(HIDDEN_SIZE, eps=LAYER_NORM_EPS)
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden_states, input_tensor):
        return self.LayerNorm(self.dropout(self.dense(hidden_states)) + input_tensor)


class LongformerAttention(nn.Module):
    def __init__(self, no_scale=False, pad_unmasked=False):
        super().__init__()
        self.self = LongformerSelfAttention(no_scale, pad_unmasked)
        self.output = LongformerSelfOutput()

    def forward(self, hidden_states, is_index_global_attn):
        return self.output(self.self(hidden_states, is_index_global_attn), hidden_states)


class LongformerIntermediate(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(HIDDEN_SIZE, INTERMEDIATE)
        self.intermediate_act_fn = nn.GELU()

    def forward(self, hidden_states):
        return self.intermediate_act_fn(self.dense(hidden_states))


class LongformerOutput(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(INTERMEDIATE, HIDDEN_SIZE)
        self.LayerNorm = nn.LayerNorm(HIDDEN_SIZE, eps=LAYER_NORM_EPS)
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden_states, input_tensor):
        return self.LayerNorm(self.dropout(self.dense(hidden_states)) + input_tensor)


class LongformerLayer(nn.Module):
    def __init__(self, no_scale=False, pad_unmasked=False):
        super().__init__()
        self.attention = LongformerAttention(no_scale, pad_unmasked)
        self.intermediate = LongformerIntermediate()
        self.output = LongformerOutput()

    def forward(self, hidden_states, is_index_global_attn):
        attention_output = self.attention(hidden_states, is_index_global_attn)
        return self.output(self.intermediate(attention_output), attention_output)


class LongformerEncoder(nn.Module):
    def __init__(self, no_scale=False, pad_unmasked=False):
        super().__init__()
        self.layer = nn.ModuleList([LongformerLayer(no_scale, pad_unmasked) for _ in range(NUM_LAYERS)])

    def forward(self, hidden_states, is_index_global_attn):
        for layer_module in self.layer:
            hidden_states = layer_module(hidden_states, is_index_global_attn)
        return hidden_states


class LongformerModel(nn.Module):
    def __init__(self, no_scale=False, pad_unmasked=False):
        super().__init__()
        self.embeddings = LongformerEmbeddings()
        self.encoder = LongformerEncoder(no_scale, pad_unmasked)

    def forward(self, input_ids, global_attention_mask):
        is_index_global_attn = global_attention_mask > 0
        return self.encoder(self.embeddings(input_ids), is_index_global_attn)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_longformer_local torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = LongformerModel(no_scale=bug == "torch_global_no_scale", pad_unmasked=bug == "torch_unfold_pad_unmasked")
    return m.eval()


def _arrays():
    rng = np.random.default_rng(41)
    ids = rng.integers(0, VOCAB_SIZE, (BATCH, MAX_POSITIONS)).astype("int64")
    mask = np.zeros((BATCH, MAX_POSITIONS), dtype="int64")
    for row, toks in enumerate(GLOBAL_TOKENS):
        mask[row, list(toks)] = 1
    return ids, mask


def inputs():
    ids, mask = _arrays()
    return (torch.from_numpy(ids), torch.from_numpy(mask)), {}


def loss(output):
    # last hidden states [2, 16, 32]
    return (output**2).mean()
