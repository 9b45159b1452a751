"""Spec: the self-attention of attn_paddle.py with torch ops (FA_ATTN: see there).
FA_ATTN_BUG=no_transpose plants a bug: k is not transposed (it runs: the shapes are square)."""

import math
import os

import torch
import torch.nn.functional as F

BATCH, SEQ, HEADS, HEAD_DIM = 2, 8, 8, 8
DIM = HEADS * HEAD_DIM
VARIANT = os.environ.get("FA_ATTN", "fold")
BUG = os.environ.get("FA_ATTN_BUG", "")


class SelfAttention(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q = torch.nn.Linear(DIM, DIM)
        self.k = torch.nn.Linear(DIM, DIM)
        self.v = torch.nn.Linear(DIM, DIM)
        self.out = torch.nn.Linear(DIM, DIM)

    def forward(self, x):
        q, k, v = (t.view(BATCH, SEQ, HEADS, HEAD_DIM).transpose(1, 2) for t in (self.q(x), self.k(x), self.v(x)))
        if VARIANT in ("sdpa", "mixed"):
            o = F.scaled_dot_product_attention(q, k, v)
        else:
            if VARIANT == "fold_k":
                k = k / math.sqrt(HEAD_DIM)
            else:
                q = q / math.sqrt(HEAD_DIM)
            dots = torch.matmul(q, k.transpose(-1, -2) if BUG != "no_transpose" else k)  # OP-DOTS
            o = torch.matmul(torch.softmax(dots, dim=-1), v)
        return self.out(o.transpose(1, 2).reshape(BATCH, SEQ, DIM))


def model():
    return SelfAttention()


def inputs():
    return (torch.zeros(BATCH, SEQ, DIM),)


def loss(out):
    return (out ** 2).mean()
