"""Hand-written port, torch side: a tiny Persimmon / Fuyu-decoder LM (written by "person B").

The same math as port_persimmon_paddle.py, re-implemented by hand. Sizes: vocab 64, width 32,
4 heads of 8, 2 layers, MLP hidden 128 (squared ReLU), LayerNorm eps 1e-5, biases on every
Linear except the untied LM head. Input: positional `input_ids` [2, 12] int64 (numpy rng seed
71). Output: logits [2, 12, 64].

Attention: q / k / v from three Linears, per-head LayerNorm on q and k (qk-layernorm), then a
PARTIAL rotary on the first 4 of the 8 features of each head (theta 25000): with the rotated
features split in halves a = x[0:2], b = x[2:4] and angles pos * inv_freq (width 2):
(a cos - b sin, b cos + a sin); features 4:8 untouched. Causal softmax(q k^T / sqrt(8)) v.

Torch idioms on this side:
- root `PersimmonLM`: `tok_embed`, `blocks` (ModuleList of `PersimmonBlock`), `norm_out`,
  `unembed` (nn.Linear, no bias).
- `PersimmonBlock`: `norm1`, `attn`, `norm2`, `ffn`.
- `QKNormAttention`: a non-persistent buffer `inv_freq` [2] registered first, then `wq`, `wk`,
  `wv` (32 -> 32, bias), `q_norm`, `k_norm` (nn.LayerNorm(8)), `wo`; cos / sin computed inline
  in every forward; F.scaled_dot_product_attention(is_causal=True).
- `SquaredReLUMLP`: `fc1`, `fc2`; the squared ReLU is inline (torch.relu(x).square()).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_relu_not_squared -> the MLP applies a plain ReLU (the square is forgotten), in both layers
  torch_qk_norm_eps      -> `q_norm` / `k_norm` are built with eps=1e-6 (the LLaMA rms_norm_eps)
                            instead of Persimmon's layer_norm_eps 1e-5, in both layers
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB, WIDTH, HEADS, DEPTH, MLP_WIDTH = 64, 32, 4, 2, 128
HEAD_DIM = WIDTH // HEADS
ROT_DIM = HEAD_DIM // 2
ROPE_THETA = 25000.0
EPS = 1e-5
BATCH, SEQ = 2, 12
OWN_BUGS = {"torch_relu_not_squared", "torch_qk_norm_eps"}
OTHER_BUGS = {"paddle_rope_theta_default", "paddle_qk_norm_after_rope"}


class QKNormAttention(nn.Module):
    def __init__(self, qk_eps=EPS):
        super().__init__()
        inv_freq = ROPE_THETA ** (-torch.arange(0, ROT_DIM, 2, dtype=torch.float32) / ROT_DIM)
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.wq = nn.Linear(WIDTH, WIDTH)
        self.wk = nn.Linear(WIDTH, WIDTH)
        self.wv = nn.Linear(WIDTH, WIDTH)
        self.q_norm = nn.LayerNorm(HEAD_DIM, eps=qk_eps)
        self.k_norm = nn.LayerNorm(HEAD_DIM, eps=qk_eps)
        self.wo = nn.Linear(WIDTH, WIDTH)

    @staticmethod
    def _partial_rotary(x, cos, sin):
        rot, keep = x[..., :ROT_DIM], x[..., ROT_DIM:]
        a, b = rot.chunk(2, dim=-1)
        rot = torch.cat([a * cos - b * sin, b * cos + a * sin], dim=-1)
        return torch.cat([rot, keep], dim=-1)

    def forward(self, x):
        b, t, _ = x.shape
        q = self.q_norm(self.wq(x).view(b, t, HEADS, HEAD_DIM)).transpose(1, 2)
        k = self.k_norm(self.wk(x).view(b, t, HEADS, HEAD_DIM)).transpose(1, 2)
        v = self.wv(x).view(b, t, HEADS, HEAD_DIM).transpose(1, 2)
        angles = torch.arange(t, dtype=torch.float32, device=x.device)[:, None] * self.inv_freq[None, :]  # [T, 2]
        cos, sin = angles.cos(), angles.sin()
        q = self._partial_rotary(q, cos, sin)
        k = self._partial_rotary(k, cos, sin)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(y.transpose(1, 2).reshape(b, t, WIDTH))


class SquaredReLUMLP(nn.Module):
    def __init__(self, squared=True):
        super().__init__()
        self.squared = squared
        self.fc1 = nn.Linear(WIDTH, MLP_WIDTH)
        self.fc2 = nn.Linear(MLP_WIDTH, WIDTH)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if self.squared:
            h = h.square()
        return self.fc2(h)


class PersimmonBlock(nn.Module):
    def __init__(self, qk_eps=EPS, squared=True):
        super().__init__()
        self.norm1 = nn.LayerNorm(WIDTH, eps=EPS)
        self.attn = QKNormAttention(qk_eps)
        self.norm2 = nn.LayerNorm(WIDTH, eps=EPS)
        self.ffn = SquaredReLUMLP(squared)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.ffn(self.norm2(x))


class PersimmonLM(nn.Module):
    def __init__(self, qk_eps=EPS, squared=True):
        super().__init__()
        self.tok_embed = nn.Embedding(VOCAB, WIDTH)
        self.blocks = nn.ModuleList([PersimmonBlock(qk_eps, squared) for _ in range(DEPTH)])
        self.norm_out = nn.LayerNorm(WIDTH, eps=EPS)
        self.unembed = nn.Linear(WIDTH, VOCAB, bias=False)

    def forward(self, input_ids):
        x = self.tok_embed(input_ids)
        for blk in self.blocks:
            x = blk(x)
        return self.unembed(self.norm_out(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_persimmon torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = PersimmonLM(
        qk_eps=1e-6 if bug == "torch_qk_norm_eps" else EPS,
        squared=bug != "torch_relu_not_squared",
    )
    return m.eval()


def _ids():
    rng = np.random.default_rng(71)
    return rng.integers(0, VOCAB, size=(BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 12, 64]
    return (output**2).mean()
