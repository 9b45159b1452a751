"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_gpt2conv_train_paddle.py): the same tiny GPT-2-style causal LM written the
HF GPT-2 way, with its own `Conv1D` module (weight [in, out], y = x @ W + b via torch.addmm; NOT
torch Linear's [out, in]) and ONE fused c_attn Conv1D(32 -> 96), columns q | k | v.

    transformer = ModuleDict(wte, wpe, drop, h = ModuleList of Block, ln_f)
    Block: ln_1, attn (c_attn (no bias: qkv_bias False, as the paddle side), c_proj: Conv1D; attn_dropout, resid_dropout; a non-persistent
        bool causal buffer `bias`), ln_2, mlp (c_fc Conv1D 32->128, NewGELU (tanh formula
        written out), c_proj Conv1D 128->32, dropout)
    lm_head = Linear(32, 128, bias=False) with lm_head.weight = transformer.wte.weight (TIED;
        named_parameters lists it once, as transformer.wte.weight)
Dropout 0.1 (embd, attention probabilities, residual): 7 calls per forward, like the paddle side.

Loss: next-token cross-entropy on logits[:, :-1] vs ids[:, 1:]. Optimizer: AdamW(lr 1e-3,
betas (0.9, 0.95), eps 1e-8) with two parameter groups (weight_decay 0.1 on ndim >= 2, 0.0 on
biases and LayerNorm), clip_grad_norm_(parameters, 1.0) in clip_grad().

PADIFF_BUG (this side only):
  attn_drop_default -> the attention-probability dropout written as nn.Dropout() without its
              argument: torch's default p 0.5 instead of attn_pdrop 0.1 (every layer)
"""
import math

import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"attn_drop_default"} | {"paddle_decay_all", "paddle_no_shift"}  # the paddle side's, ignored here
VOCAB, N_POS, D, HEADS, LAYERS = 128, 16, 32, 4, 2
BATCH, SEQ = 2, 8
QKV_BIAS = False  # as the paddle original (see there: a key bias has an exactly zero gradient)
EMBD_PDROP = ATTN_PDROP = RESID_PDROP = 0.1
LR, BETAS, EPS, WD, CLIP = 1e-3, (0.9, 0.95), 1e-8, 0.1, 1.0
IDS = np.random.default_rng(7).integers(4, VOCAB, (BATCH, SEQ)).astype("int64")


class Conv1D(nn.Module):
    """HF GPT-2's Conv1D: a linear layer with the weight stored transposed ([nx, nf])."""

    def __init__(self, nf, nx, bias=True):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf).normal_(std=0.02))
        self.bias = nn.Parameter(torch.zeros(nf)) if bias else None

    def forward(self, x):
        x2 = x.reshape(-1, x.size(-1))
        out = x2 @ self.weight if self.bias is None else torch.addmm(self.bias, x2, self.weight)
        return out.reshape(x.shape[:-1] + (self.nf,))


class NewGELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Attention(nn.Module):
    def __init__(self, attn_drop_default=False):
        super().__init__()
        self.register_buffer("bias", torch.tril(torch.ones(N_POS, N_POS, dtype=torch.bool)).view(1, 1, N_POS, N_POS),
                             persistent=False)
        self.c_attn = Conv1D(3 * D, D, bias=QKV_BIAS)
        self.c_proj = Conv1D(D, D)
        self.attn_dropout = nn.Dropout() if attn_drop_default else nn.Dropout(ATTN_PDROP)
        self.resid_dropout = nn.Dropout(RESID_PDROP)
        self.head_dim = D // HEADS

    def _split(self, x):
        return x.view(x.size(0), x.size(1), HEADS, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x):
        q, k, v = self.c_attn(x).split(D, dim=2)
        q, k, v = self._split(q), self._split(k), self._split(v)
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        t = x.size(1)
        w = torch.where(self.bias[:, :, :t, :t], w, torch.tensor(torch.finfo(w.dtype).min, dtype=w.dtype))
        w = self.attn_dropout(nn.functional.softmax(w, dim=-1))
        a = torch.matmul(w, v).permute(0, 2, 1, 3).contiguous().view(x.size(0), t, D)
        return self.resid_dropout(self.c_proj(a))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_fc = Conv1D(4 * D, D)
        self.c_proj = Conv1D(D, 4 * D)
        self.act = NewGELU()
        self.dropout = nn.Dropout(RESID_PDROP)

    def forward(self, x):
        return self.dropout(self.c_proj(self.act(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, attn_drop_default=False):
        super().__init__()
        self.ln_1 = nn.LayerNorm(D, eps=1e-5)
        self.attn = Attention(attn_drop_default)
        self.ln_2 = nn.LayerNorm(D, eps=1e-5)
        self.mlp = MLP()

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2LMHead(nn.Module):
    def __init__(self, attn_drop_default=False):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(VOCAB, D), wpe=nn.Embedding(N_POS, D), drop=nn.Dropout(EMBD_PDROP),
            h=nn.ModuleList([Block(attn_drop_default) for _ in range(LAYERS)]), ln_f=nn.LayerNorm(D, eps=1e-5)))
        self.lm_head = nn.Linear(D, VOCAB, bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # tied

    def forward(self, input_ids):
        pos = torch.arange(input_ids.size(1), dtype=torch.long).unsqueeze(0)
        tr = self.transformer
        x = tr.drop(tr.wte(input_ids) + tr.wpe(pos))
        for block in tr.h:
            x = block(x)
        return self.lm_head(tr.ln_f(x))


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    m = GPT2LMHead(attn_drop_default=b == "attn_drop_default")
    m.train()
    return m


def inputs():
    return (torch.from_numpy(IDS),), {}


def loss(output):
    v = output.size(-1)
    return F.cross_entropy(output[:, :-1].reshape(-1, v), torch.from_numpy(IDS[:, 1:].reshape(-1)))


def optimizer(model):
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": WD},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=LR, betas=BETAS, eps=EPS)


def clip_grad(model):
    torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
