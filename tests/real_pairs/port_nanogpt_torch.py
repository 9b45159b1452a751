"""Hand-written port, torch side: a tiny GPT-2-like decoder LM (written by "person B").

The same math as port_nanogpt_paddle.py, written by hand in nanoGPT style: a
`transformer` ModuleDict (wte, wpe, h = ModuleList of Blocks, ln_f) and an `lm_head` whose
weight is TIED to the token embedding (`transformer.wte.weight = lm_head.weight`, so
named_parameters lists it once, as transformer.wte.weight). Each Block: ln_1, attn
(CausalSelfAttention with one fused `c_attn` Linear(32, 96), rows q | k | v, and `c_proj`,
attention through F.scaled_dot_product_attention(is_causal=True)), ln_2, mlp (MLP: c_fc, gelu
= nn.GELU(), c_proj). LayerNorm is nanoGPT's own small module calling F.layer_norm (eps 1e-5).

Planted bugs (PADIFF_BUG), see port_nanogpt_truth.json:
  gelu_tanh -> every MLP's gelu is nn.GELU(approximate="tanh") (GPT-2's "gelu_new") instead of
               the erf GELU of the paddle original
  head_view -> the attention splits heads with q.reshape(B, n_head, T, hs) (no transpose of a
               [B, T, n_head, hs] view), mixing positions and heads
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB, BLOCK, WIDTH, HEADS, LAYERS = 64, 16, 32, 4, 2
BATCH, SEQ = 2, 12
OWN_BUGS = {"gelu_tanh", "head_view"}
OTHER_BUGS = {"paddle_causal_off_by_one"}


class LayerNorm(nn.Module):
    """LayerNorm with an optional bias (nanoGPT's)."""

    def __init__(self, ndim, bias=True):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, head_view=False):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head, self.n_embd, self.head_view = n_head, n_embd, head_view

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        hs = C // self.n_head
        if self.head_view:  # the bug: a reshape straight to [B, nh, T, hs]
            q, k, v = (z.reshape(B, self.n_head, T, hs) for z in (q, k, v))
        else:
            q, k, v = (z.view(B, T, self.n_head, hs).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, n_embd, approximate="none"):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.gelu = nn.GELU(approximate=approximate)
        self.c_proj = nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, n_embd, n_head, approximate, head_view):
        super().__init__()
        self.ln_1 = LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, head_view)
        self.ln_2 = LayerNorm(n_embd)
        self.mlp = MLP(n_embd, approximate)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    def __init__(self, approximate="none", head_view=False):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(VOCAB, WIDTH),
            wpe=nn.Embedding(BLOCK, WIDTH),
            h=nn.ModuleList([Block(WIDTH, HEADS, approximate, head_view) for _ in range(LAYERS)]),
            ln_f=LayerNorm(WIDTH),
        ))
        self.lm_head = nn.Linear(WIDTH, VOCAB, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying

    def forward(self, idx):
        _, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        return self.lm_head(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_nanogpt torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = GPT(approximate="tanh" if bug == "gelu_tanh" else "none", head_view=bug == "head_view")
    return m.eval()


def _ids():
    rng = np.random.default_rng(11)
    return rng.integers(0, VOCAB, size=(BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [B, T, VOCAB] (through the tied lm_head, not a LayerNorm output itself)
    return (output**2).mean()
