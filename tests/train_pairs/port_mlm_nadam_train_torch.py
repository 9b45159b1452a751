"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_mlm_nadam_train_paddle.py), minGPT-style blocks with a BERT masked-LM head.

    MaskedLM: registers tok_emb (Embedding 64 x 32), pos_emb (a raw Parameter [1, 16, 32]),
        emb_drop (Dropout 0.1), blocks (ModuleList of 2 Block), ln_f (LayerNorm), mlm_dense (Linear
        32 -> 32), mlm_norm (LayerNorm), mlm_bias (Parameter [64]); the MLM head is inline code of
        the root and its decoder is F.linear(h, self.tok_emb.weight, self.mlm_bias): tied by use,
        no decoder module or second parameter name
    Block: ln_1, attn (SelfAttention: fused qkv Linear 32 -> 96 without bias, proj Linear 32 -> 32
        without bias; the attention-probability dropout and the residual dropout are inline
        F.dropout calls), ln_2, ffn (FeedForward: fc_in 32 -> 64, gelu, fc_out 64 -> 32, then an
        inline F.dropout); x = x + attn(ln_1(x)); x = x + ffn(ln_2(x))
    forward(input_ids [4, 12], attention_mask [4, 12] bool) -> logits [4, 12, 64]

Loss: the selected positions gathered with a boolean index: logits[sel] [8, 64] against the
original ids[sel], F.cross_entropy (mean over the 8). Same masking recipe and numbers as the paddle
side (default_rng(3400 + step)).
Optimizer: torch.optim.NAdam(lr 2e-3, betas (0.9, 0.999), eps 1e-8, momentum_decay 4e-3),
no weight decay, no clipping.

PADIFF_BUG (this side only):
  torch_nadam_beta2 -> NAdam(betas=(0.9, 0.98)): the RoBERTa pretraining betas instead of the
              original's (0.9, 0.999)
"""
import math

import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_nadam_beta2"} | {"paddle_ignore_minus100", "paddle_act_dropout"}  # the paddle side's, ignored here
N_VOCAB, D_MODEL, N_HEAD, D_FF, N_LAYER, BLOCK_SIZE = 64, 32, 4, 64, 2, 16
BATCH, SEQ, PRED_PER_SEQ = 4, 12, 2
PAD, MASK, FIRST_WORD = 0, 1, 4
P_DROP = 0.1

_TARGET = {}


def masked_batch(step):
    """input ids (corrupted), attention mask, the original ids and the selected positions (numpy)."""
    rng = np.random.default_rng(3400 + step)
    ids = rng.integers(FIRST_WORD, N_VOCAB, (BATCH, SEQ)).astype(np.int64)
    attn = np.ones((BATCH, SEQ), dtype=bool)
    attn[3, 9:] = False
    ids[~attn] = PAD
    sel = np.zeros((BATCH, SEQ), dtype=bool)
    for b in range(BATCH):
        sel[b, rng.choice(np.flatnonzero(attn[b]), PRED_PER_SEQ, replace=False)] = True
    u = rng.random((BATCH, SEQ))
    random_words = rng.integers(FIRST_WORD, N_VOCAB, (BATCH, SEQ)).astype(np.int64)
    corrupted = ids.copy()
    corrupted[sel & (u < 0.8)] = MASK
    rand = sel & (u >= 0.8) & (u < 0.9)
    corrupted[rand] = random_words[rand]
    return corrupted, attn, ids, sel


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL, bias=False)
        self.proj = nn.Linear(D_MODEL, D_MODEL, bias=False)

    def forward(self, x, key_mask):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=-1)
        q = q.view(B, T, N_HEAD, C // N_HEAD).transpose(1, 2)
        k = k.view(B, T, N_HEAD, C // N_HEAD).transpose(1, 2)
        v = v.view(B, T, N_HEAD, C // N_HEAD).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // N_HEAD))
        att = att.masked_fill(~key_mask[:, None, None, :], float("-inf"))
        att = F.dropout(att.softmax(dim=-1), P_DROP, self.training)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        return F.dropout(self.proj(y), P_DROP, self.training)


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc_in = nn.Linear(D_MODEL, D_FF)
        self.fc_out = nn.Linear(D_FF, D_MODEL)

    def forward(self, x):
        return F.dropout(self.fc_out(F.gelu(self.fc_in(x))), P_DROP, self.training)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(D_MODEL)
        self.attn = SelfAttention()
        self.ln_2 = nn.LayerNorm(D_MODEL)
        self.ffn = FeedForward()

    def forward(self, x, key_mask):
        x = x + self.attn(self.ln_1(x), key_mask)
        return x + self.ffn(self.ln_2(x))


class MaskedLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok_emb = nn.Embedding(N_VOCAB, D_MODEL)
        self.pos_emb = nn.Parameter(torch.zeros(1, BLOCK_SIZE, D_MODEL))
        self.emb_drop = nn.Dropout(P_DROP)
        self.blocks = nn.ModuleList([Block() for _ in range(N_LAYER)])
        self.ln_f = nn.LayerNorm(D_MODEL)
        self.mlm_dense = nn.Linear(D_MODEL, D_MODEL)
        self.mlm_norm = nn.LayerNorm(D_MODEL)
        self.mlm_bias = nn.Parameter(torch.zeros(N_VOCAB))
        nn.init.normal_(self.pos_emb, std=0.02)

    def forward(self, input_ids, attention_mask):
        T = input_ids.shape[1]
        x = self.emb_drop(self.tok_emb(input_ids) + self.pos_emb[:, :T])
        for block in self.blocks:
            x = block(x, attention_mask)
        h = self.mlm_norm(F.gelu(self.mlm_dense(self.ln_f(x))))
        return F.linear(h, self.tok_emb.weight, self.mlm_bias)  # decoder tied to the token embedding


def model():
    bug(BUGS)
    torch.manual_seed(34)
    m = MaskedLM()
    m.train()
    return m


def inputs(step=0):
    corrupted, attn, ids, sel = masked_batch(step)
    _TARGET.update(ids=torch.from_numpy(ids), sel=torch.from_numpy(sel))
    return (torch.from_numpy(corrupted), torch.from_numpy(attn)), {}


def loss(output):
    sel = _TARGET["sel"]
    return F.cross_entropy(output[sel], _TARGET["ids"][sel])


def optimizer(model):
    betas = (0.9, 0.98) if bug(BUGS) == "torch_nadam_beta2" else (0.9, 0.999)
    return torch.optim.NAdam(model.parameters(), lr=2e-3, betas=betas, eps=1e-8, momentum_decay=4e-3)
