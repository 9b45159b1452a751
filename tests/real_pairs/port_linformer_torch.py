"""Hand-written port, torch side: a tiny Linformer encoder classifier (written by "person B").

The same math as port_linformer_paddle.py, re-implemented by hand. Sizes: vocab 50, n = 16,
k = 8, d_model 32, 2 heads of 16, FFN 64 (erf GELU), 2 post-LN layers, LayerNorm eps 1e-5, CLS
pooler + tanh, 3 classes, batch 2. Output: logits [2, 3].

Torch idioms on this side:
- root `Linformer`: `tok_emb` (nn.Embedding), `pos_emb` (a RAW nn.Parameter [1, 16, 32] added to
  the token embeddings, no module), `emb_ln`, `blocks` (ModuleList of `LinformerBlock`), `pool`
  (nn.Sequential(Linear, Tanh)), `cls` (Linear 32 -> 3).
- `LinformerBlock` registers `ln_attn`, `attention`, `ln_mlp`, `mlp` (nn.Sequential(Linear,
  GELU, Linear)); forward: x = ln_attn(x + attention(x)); x = ln_mlp(x + mlp(x)).
- `LowRankAttention` registers the sequence projections FIRST as raw nn.Parameters
  `proj_E`, `proj_F` [k, n] = [8, 16] (xavier-uniform), then ONE packed `qkv` Linear(32, 96)
  (rows 0:32 q, 32:64 k, 64:96 v) chunked in three, then `out`. Keys / values are projected with
  torch.matmul(proj_E, k) / torch.matmul(proj_F, v) ([k, n] @ [B, n, d] -> [B, k, d]), the
  attention itself is F.scaled_dot_product_attention (default scale 1 / sqrt(head_dim)).

Planted bug (PADIFF_BUG), see port_linformer_truth.json; the paddle side's bug names are accepted
and ignored, any other name raises ValueError:
  torch_scale_by_k -> scaled_dot_product_attention(..., scale=1 / sqrt(k)) with k = 8 the
                      projected LENGTH, instead of the default 1 / sqrt(head_dim = 16)
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB, SEQ, PROJ_K, D_MODEL, HEADS, D_FF, LAYERS, CLASSES = 50, 16, 8, 32, 2, 64, 2, 3
HEAD_DIM = D_MODEL // HEADS
BATCH = 2
OWN_BUGS = {"torch_scale_by_k"}
OTHER_BUGS = {"paddle_ef_swapped", "paddle_ffn_residual_missing"}


class LowRankAttention(nn.Module):
    def __init__(self, dim, heads, seq_len, k, scale_by_k=False):
        super().__init__()
        self.heads, self.k = heads, k
        self.scale = 1.0 / math.sqrt(k) if scale_by_k else None  # None -> 1 / sqrt(head_dim)
        self.proj_E = nn.Parameter(nn.init.xavier_uniform_(torch.empty(k, seq_len)))
        self.proj_F = nn.Parameter(nn.init.xavier_uniform_(torch.empty(k, seq_len)))
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        k = torch.matmul(self.proj_E, k)  # [k, n] @ [b, n, d] -> [b, k, d]
        v = torch.matmul(self.proj_F, v)
        q = q.view(b, n, self.heads, d // self.heads).transpose(1, 2)
        k = k.view(b, self.k, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, self.k, self.heads, d // self.heads).transpose(1, 2)
        o = F.scaled_dot_product_attention(q, k, v, scale=self.scale)
        return self.out(o.transpose(1, 2).reshape(b, n, d))


class LinformerBlock(nn.Module):
    def __init__(self, scale_by_k=False):
        super().__init__()
        self.ln_attn = nn.LayerNorm(D_MODEL)
        self.attention = LowRankAttention(D_MODEL, HEADS, SEQ, PROJ_K, scale_by_k)
        self.ln_mlp = nn.LayerNorm(D_MODEL)
        self.mlp = nn.Sequential(nn.Linear(D_MODEL, D_FF), nn.GELU(), nn.Linear(D_FF, D_MODEL))

    def forward(self, x):
        x = self.ln_attn(x + self.attention(x))
        return self.ln_mlp(x + self.mlp(x))


class Linformer(nn.Module):
    def __init__(self, scale_by_k=False):
        super().__init__()
        self.tok_emb = nn.Embedding(VOCAB, D_MODEL)
        self.pos_emb = nn.Parameter(torch.randn(1, SEQ, D_MODEL) * 0.02)
        self.emb_ln = nn.LayerNorm(D_MODEL)
        self.blocks = nn.ModuleList([LinformerBlock(scale_by_k) for _ in range(LAYERS)])
        self.pool = nn.Sequential(nn.Linear(D_MODEL, D_MODEL), nn.Tanh())
        self.cls = nn.Linear(D_MODEL, CLASSES)

    def forward(self, input_ids):
        x = self.emb_ln(self.tok_emb(input_ids) + self.pos_emb[:, : input_ids.shape[1]])
        for blk in self.blocks:
            x = blk(x)
        return self.cls(self.pool(x[:, 0]))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_linformer torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    return Linformer(scale_by_k=bug == "torch_scale_by_k").eval()


def _ids():
    rng = np.random.default_rng(33)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 3]
    return (output**2).mean()
