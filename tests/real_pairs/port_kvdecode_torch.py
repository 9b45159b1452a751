"""Hand-written port, torch side: a tiny GPT decoder run as greedy generation WITHOUT a cache (written by "person B").

The same model as port_kvdecode_paddle.py, re-implemented by hand in the style of nanoGPT: vocab
48, width 32, 4 heads of 8, MLP 128 with tanh-approximate GELU, 2 pre-norm blocks, learned
positions (16), LayerNorm eps 1e-5, tied head. Input: positional `input_ids` [2, 6] int64 (the
prompt). Greedy generation of 4 new tokens inside the forward; output: the next-token logits of
the 4 steps, stacked, [2, 4, 48].

Torch idioms on this side:
- NO key/value cache: every step runs the backbone on the WHOLE sequence so far (prompt +
  generated tokens: lengths 6, 7, 8, 9), takes the last position's logits, appends the argmax
  token with torch.cat and starts again. So every module call of step t sees 6 + t positions.
- root `GreedyGPT`: `transformer` (GPTBackbone, called once per step with the full idx and
  returning the final hidden states), then `lm_head` Linear(32, 48, bias=False) whose weight IS
  `transformer.wte.weight` (nanoGPT weight tying; named_parameters lists it once), applied to
  the last position only.
- `GPTBackbone`: `wte`, `wpe` (nn.Embedding), `h` (ModuleList of Block), `ln_f`; positions
  torch.arange(0, T) inline.
- `Block`: `ln_1`, `attn`, `ln_2`, `mlp`.
- `CausalSelfAttention`: ONE fused `c_attn` Linear(32, 96) split into q | k | v, `c_proj`, a
  registered lower-triangular `bias` buffer [1, 1, 16, 16] used with masked_fill(-inf).
- `MLP`: `c_fc`, `gelu` (nn.GELU(approximate="tanh") module), `c_proj`.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_gelu_exact      -> the MLP's activation module is nn.GELU() (exact erf) instead of
                           nn.GELU(approximate="tanh") (precision-level)
  torch_attn_scale_embd -> attention scores are scaled by 1 / sqrt(n_embd) = 1 / sqrt(32) instead
                           of 1 / sqrt(head_dim) = 1 / sqrt(8)
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB_SIZE, N_EMBD, N_HEAD, N_LAYER, BLOCK_SIZE = 48, 32, 4, 2, 16
BATCH, PROMPT, MAX_NEW_TOKENS = 2, 6, 4
OWN_BUGS = {"torch_gelu_exact", "torch_attn_scale_embd"}
OTHER_BUGS = {"paddle_past_len_heads_axis", "paddle_cache_mask_topleft"}


class CausalSelfAttention(nn.Module):
    def __init__(self, scale_embd=False):
        super().__init__()
        self.c_attn = nn.Linear(N_EMBD, 3 * N_EMBD)
        self.c_proj = nn.Linear(N_EMBD, N_EMBD)
        self.register_buffer("bias", torch.tril(torch.ones(BLOCK_SIZE, BLOCK_SIZE)).view(1, 1, BLOCK_SIZE, BLOCK_SIZE))
        self.scale_embd = scale_embd

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(N_EMBD, dim=2)
        k = k.view(B, T, N_HEAD, C // N_HEAD).transpose(1, 2)
        q = q.view(B, T, N_HEAD, C // N_HEAD).transpose(1, 2)
        v = v.view(B, T, N_HEAD, C // N_HEAD).transpose(1, 2)
        scale = 1.0 / math.sqrt(C) if self.scale_embd else 1.0 / math.sqrt(k.size(-1))
        att = (q @ k.transpose(-2, -1)) * scale
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, exact_gelu=False):
        super().__init__()
        self.c_fc = nn.Linear(N_EMBD, 4 * N_EMBD)
        self.gelu = nn.GELU() if exact_gelu else nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * N_EMBD, N_EMBD)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, exact_gelu=False, scale_embd=False):
        super().__init__()
        self.ln_1 = nn.LayerNorm(N_EMBD)
        self.attn = CausalSelfAttention(scale_embd)
        self.ln_2 = nn.LayerNorm(N_EMBD)
        self.mlp = MLP(exact_gelu)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPTBackbone(nn.Module):
    def __init__(self, exact_gelu=False, scale_embd=False):
        super().__init__()
        self.wte = nn.Embedding(VOCAB_SIZE, N_EMBD)
        self.wpe = nn.Embedding(BLOCK_SIZE, N_EMBD)
        self.h = nn.ModuleList([Block(exact_gelu, scale_embd) for _ in range(N_LAYER)])
        self.ln_f = nn.LayerNorm(N_EMBD)

    def forward(self, idx):
        t = idx.size(1)
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return self.ln_f(x)


class GreedyGPT(nn.Module):
    def __init__(self, exact_gelu=False, scale_embd=False):
        super().__init__()
        self.transformer = GPTBackbone(exact_gelu, scale_embd)
        self.lm_head = nn.Linear(N_EMBD, VOCAB_SIZE, bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # weight tying

    def forward(self, idx):
        outs = []
        for _ in range(MAX_NEW_TOKENS):
            x = self.transformer(idx)  # the whole sequence, no cache
            logits = self.lm_head(x[:, -1, :])
            outs.append(logits)
            idx_next = torch.argmax(logits, dim=-1, keepdim=True)
            idx = torch.cat((idx, idx_next), dim=1)
        return torch.stack(outs, dim=1)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_kvdecode torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = GreedyGPT(exact_gelu=bug == "torch_gelu_exact", scale_embd=bug == "torch_attn_scale_embd")
    return m.eval()


def _prompt():
    rng = np.random.default_rng(11)
    return rng.integers(0, VOCAB_SIZE, (BATCH, PROMPT)).astype("int64")


def inputs():
    return (torch.from_numpy(_prompt()),), {}


def loss(output):
    # stacked next-token logits [2, 4, 48]
    return (output**2).mean()
