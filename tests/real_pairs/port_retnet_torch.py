"""Hand-written port, torch side: a tiny RetNet-style decoder LM (written by "person B").

The same math as port_retnet_paddle.py, re-implemented by hand. Sizes: vocab 64, hidden 32,
4 heads of 8, FFN 64 (erf GELU), 2 layers, sequence length 16, batch 2, LayerNorm eps 1e-6.

Torch idioms on this side:
- root `RetNet`: `tok_embeddings`, then `head` (untied nn.Linear(32, 64, bias=False)) and
  `norm_out` registered BEFORE `blocks` (ModuleList of `RetentionBlock`); a buffer `inv_freq`
  [4] at the root. The rotation is complex multiplication: `rot` = polar(1, pos * inv_freq)
  [L, 4] is built inline in the root forward and handed to every block.
- `RetentionBlock` registers `msr`, `ffn` (nn.Sequential(Linear, GELU, Linear)) and only then
  `norm1`, `norm2`: x + msr(norm1(x)), then x + ffn(norm2(x)).
- `MultiScaleRetention` (`msr`): ONE packed `qkvg` Linear(32, 128) whose output is split
  q | k | v | g; a non-persistent buffer `gamma` [4] = 1 - 2^(-5 - arange(4)); q and k are
  rotated as complex numbers (pairs (0,1), (2,3), ...), THEN k is scaled by head_dim^-0.5; the
  decay mask is built with POWERS: gamma[h] ** clamp(n - m, 0) times a 0/1 lower-triangular
  matrix, each row divided by the square root of its sum; ((q k^T) * D) v; nn.GroupNorm(4, 32,
  eps 1e-6) on [B * L, 32]; F.silu(g) * that; `out_proj`.

Planted bug (PADIFF_BUG), see port_retnet_truth.json; the paddle side's bug names are accepted
and ignored, any other name raises ValueError:
  torch_decay_per_layer -> gamma is computed from the LAYER index instead of the head index:
                           every head of block i gets 1 - 2^(-5 - i) (block 0: all heads 0.969,
                           block 1: all heads 0.984) instead of one decay per head
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB, HIDDEN, HEADS, FFN_DIM, LAYERS = 64, 32, 4, 64, 2
HEAD_DIM = HIDDEN // HEADS
LN_EPS = 1e-6
BATCH, SEQ = 2, 16
OWN_BUGS = {"torch_decay_per_layer"}
OTHER_BUGS = {"paddle_mask_off_by_one", "paddle_layernorm_not_group"}


def rotate(x, rot):
    """x [B, H, L, D] real, rot [L, D/2] complex: rotate the pairs (x[2i], x[2i+1])."""
    xc = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2).contiguous())
    return torch.view_as_real(xc * rot).flatten(-2)


class MultiScaleRetention(nn.Module):
    def __init__(self, layer_idx, decay_per_layer=False):
        super().__init__()
        self.qkvg = nn.Linear(HIDDEN, 4 * HIDDEN)
        self.out_proj = nn.Linear(HIDDEN, HIDDEN)
        self.group_norm = nn.GroupNorm(HEADS, HIDDEN, eps=LN_EPS)
        if decay_per_layer:
            gamma = (1.0 - 2.0 ** (-5.0 - layer_idx)) * torch.ones(HEADS)
        else:
            gamma = 1.0 - 2.0 ** (-5.0 - torch.arange(HEADS, dtype=torch.float32))
        self.register_buffer("gamma", gamma, persistent=False)

    def forward(self, x, rot):
        b, n, _ = x.shape
        q, k, v, g = self.qkvg(x).split(HIDDEN, dim=-1)
        q, k, v = (t.view(b, n, HEADS, HEAD_DIM).transpose(1, 2) for t in (q, k, v))
        q = rotate(q, rot)
        k = rotate(k, rot) * HEAD_DIM**-0.5
        pos = torch.arange(n, device=x.device)
        dist = pos[:, None] - pos[None, :]
        causal = torch.tril(torch.ones(n, n, device=x.device))
        decay = self.gamma[:, None, None] ** dist.clamp(min=0).float() * causal
        decay = decay / decay.sum(dim=-1, keepdim=True).sqrt()
        ret = (q @ k.transpose(-1, -2) * decay) @ v  # [B, H, L, D]
        ret = self.group_norm(ret.transpose(1, 2).reshape(b * n, HIDDEN)).view(b, n, HIDDEN)
        return self.out_proj(F.silu(g) * ret)


class RetentionBlock(nn.Module):
    def __init__(self, layer_idx, decay_per_layer=False):
        super().__init__()
        self.msr = MultiScaleRetention(layer_idx, decay_per_layer)
        self.ffn = nn.Sequential(nn.Linear(HIDDEN, FFN_DIM), nn.GELU(), nn.Linear(FFN_DIM, HIDDEN))
        self.norm1 = nn.LayerNorm(HIDDEN, eps=LN_EPS)
        self.norm2 = nn.LayerNorm(HIDDEN, eps=LN_EPS)

    def forward(self, x, rot):
        x = x + self.msr(self.norm1(x), rot)
        return x + self.ffn(self.norm2(x))


class RetNet(nn.Module):
    def __init__(self, decay_per_layer=False):
        super().__init__()
        self.tok_embeddings = nn.Embedding(VOCAB, HIDDEN)
        self.head = nn.Linear(HIDDEN, VOCAB, bias=False)
        self.norm_out = nn.LayerNorm(HIDDEN, eps=LN_EPS)
        self.blocks = nn.ModuleList([RetentionBlock(i, decay_per_layer) for i in range(LAYERS)])
        inv_freq = 1.0 / 10000 ** torch.linspace(0, 1, HEAD_DIM // 2)
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, input_ids):
        n = input_ids.shape[1]
        theta = torch.arange(n, dtype=torch.float32, device=input_ids.device)[:, None] * self.inv_freq[None, :]
        rot = torch.polar(torch.ones_like(theta), theta)  # [L, D/2] complex64
        h = self.tok_embeddings(input_ids)
        for blk in self.blocks:
            h = blk(h, rot)
        return self.head(self.norm_out(h))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_retnet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = RetNet(decay_per_layer=bug == "torch_decay_per_layer")
    return m.eval()


def _ids():
    rng = np.random.default_rng(21)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 16, 64]
    return (output**2).mean()
