"""Hand-written port, torch side: a tiny decoder-only LM with ALiBi attention bias (written by "person B").

The same math as port_alibi_lm_paddle.py, re-implemented by hand. Sizes: vocab 64, width 32,
4 heads of 8, SwiGLU hidden 64, 2 layers, block size 16, sequence length 12, batch 2, RMSNorm
eps 1e-5. No position embeddings; ALiBi bias m_h * (j - i) on the scores, m = 1/4, 1/16, 1/64,
1/256. The LM head is NOT tied on this side: `lm_head` is its own nn.Linear(32, 64, bias=False)
(after copying weights it holds the same values as the token embedding, as the paddle model
reuses its embedding matrix).

Torch idioms on this side:
- root `ALiBiGPT`: `wte`, `h` = ModuleList of `Block`, `ln_f` (torch's nn.RMSNorm), `lm_head`.
- `Block`: `ln_1`, `attn`, `ln_2`, `mlp` (in call order).
- `CausalSelfAttention`: buffers registered FIRST, in __init__: `slopes` [4] (non-persistent,
  from the closed form 2^(-8 (h + 1) / n)) and `bias` = the causal tril mask
  [1, 1, 16, 16] (bool, nanoGPT's name); then THREE separate Linears `query`, `key`, `value`
  (32 -> 32, no bias) and `proj` (32 -> 32, no bias); q.k^T / sqrt(8) + slopes * (j - i),
  masked_fill(-inf) where the mask is False, softmax, @ v.
- `SwiGLU`: ONE fused `w12` Linear(32, 128, no bias) chunked into gate (rows 0:64) | up
  (rows 64:128), F.silu(gate) * up, `w3` Linear(64, 32, no bias).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_causal_off_by_one -> the causal buffer is torch.tril(..., diagonal=1): every position
                             also attends to the NEXT token
  torch_swiglu_swapped    -> the fused w12 output is unpacked as `up, gate = ...chunk(2)`:
                             silu is applied to the up half and the gate half is the multiplier
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB, N_EMBD, N_HEAD, N_LAYER, FFN, BLOCK = 64, 32, 4, 2, 64, 16
RMS_EPS = 1e-5
BATCH, SEQ = 2, 12
OWN_BUGS = {"torch_causal_off_by_one", "torch_swiglu_swapped"}
OTHER_BUGS = {"paddle_slopes_reversed", "paddle_rmsnorm_eps_outside"}


class CausalSelfAttention(nn.Module):
    def __init__(self, mask_diagonal=0):
        super().__init__()
        slopes = torch.pow(2.0, -8.0 * torch.arange(1, N_HEAD + 1, dtype=torch.float32) / N_HEAD)
        self.register_buffer("slopes", slopes, persistent=False)
        causal = torch.tril(torch.ones(BLOCK, BLOCK, dtype=torch.bool), diagonal=mask_diagonal)
        self.register_buffer("bias", causal.view(1, 1, BLOCK, BLOCK))
        self.query = nn.Linear(N_EMBD, N_EMBD, bias=False)
        self.key = nn.Linear(N_EMBD, N_EMBD, bias=False)
        self.value = nn.Linear(N_EMBD, N_EMBD, bias=False)
        self.proj = nn.Linear(N_EMBD, N_EMBD, bias=False)

    def forward(self, x):
        B, T, C = x.size()
        hs = C // N_HEAD
        q = self.query(x).view(B, T, N_HEAD, hs).transpose(1, 2)
        k = self.key(x).view(B, T, N_HEAD, hs).transpose(1, 2)
        v = self.value(x).view(B, T, N_HEAD, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
        pos = torch.arange(T, device=x.device)
        rel = (pos[None, :] - pos[:, None]).to(att.dtype)  # key index - query index
        att = att + self.slopes.view(N_HEAD, 1, 1) * rel
        att = att.masked_fill(~self.bias[:, :, :T, :T], float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y)


class SwiGLU(nn.Module):
    def __init__(self, swapped=False):
        super().__init__()
        self.swapped = swapped
        self.w12 = nn.Linear(N_EMBD, 2 * FFN, bias=False)
        self.w3 = nn.Linear(FFN, N_EMBD, bias=False)

    def forward(self, x):
        if self.swapped:
            up, gate = self.w12(x).chunk(2, dim=-1)
        else:
            gate, up = self.w12(x).chunk(2, dim=-1)
        return self.w3(F.silu(gate) * up)


class Block(nn.Module):
    def __init__(self, mask_diagonal=0, swapped=False):
        super().__init__()
        self.ln_1 = nn.RMSNorm(N_EMBD, eps=RMS_EPS)
        self.attn = CausalSelfAttention(mask_diagonal)
        self.ln_2 = nn.RMSNorm(N_EMBD, eps=RMS_EPS)
        self.mlp = SwiGLU(swapped)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class ALiBiGPT(nn.Module):
    def __init__(self, mask_diagonal=0, swapped=False):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, N_EMBD)
        self.h = nn.ModuleList([Block(mask_diagonal, swapped) for _ in range(N_LAYER)])
        self.ln_f = nn.RMSNorm(N_EMBD, eps=RMS_EPS)
        self.lm_head = nn.Linear(N_EMBD, VOCAB, bias=False)  # not tied

    def forward(self, idx):
        x = self.wte(idx)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_alibi_lm torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = ALiBiGPT(mask_diagonal=1 if bug == "torch_causal_off_by_one" else 0,
                 swapped=bug == "torch_swiglu_swapped")
    return m.eval()


def _ids():
    rng = np.random.default_rng(21)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 12, 64]
    return (output**2).mean()
