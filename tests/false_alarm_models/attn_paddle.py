"""Spec: multi-head self-attention written with paddle ops, head_dim == sequence length ==
heads (8), so operands of different meaning have equal shapes (k vs k^T, [B,S,H,D] vs [B,H,S,D]).

FA_ATTN (environment) picks how both sides compute it (see attn_torch.py):
fold   - the manual path; paddle folds 1/sqrt(d) into k and the transpose into
         ``matmul(transpose_y=True)``; torch scales q and transposes k with an op
fold_k - the same, but torch scales k too
sdpa   - both call their framework's scaled_dot_product_attention (paddle's layout is
         [B, S, H, D], torch's [B, H, S, D])
mixed  - paddle's manual path against torch's scaled_dot_product_attention
"""

import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F

BATCH, SEQ, HEADS, HEAD_DIM = 2, 8, 8, 8
DIM = HEADS * HEAD_DIM
VARIANT = os.environ.get("FA_ATTN", "fold")


class SelfAttention(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.q = paddle.nn.Linear(DIM, DIM)
        self.k = paddle.nn.Linear(DIM, DIM)
        self.v = paddle.nn.Linear(DIM, DIM)
        self.out = paddle.nn.Linear(DIM, DIM)

    def forward(self, x):
        split = [BATCH, SEQ, HEADS, HEAD_DIM]
        q, k, v = (paddle.reshape(t, split) for t in (self.q(x), self.k(x), self.v(x)))
        if VARIANT == "sdpa":
            o = F.scaled_dot_product_attention(q, k, v)  # [B, S, H, D]
        else:
            q, k, v = (paddle.transpose(t, perm=[0, 2, 1, 3]) for t in (q, k, v))  # [B, H, S, D]
            k = k / math.sqrt(HEAD_DIM)
            dots = paddle.matmul(q, k, transpose_y=True)  # OP-DOTS
            o = paddle.transpose(paddle.matmul(F.softmax(dots, axis=-1), v), perm=[0, 2, 1, 3])
        return self.out(paddle.reshape(o, [BATCH, SEQ, DIM]))


def model():
    paddle.seed(0)
    return SelfAttention()


def inputs():
    x = np.random.default_rng(0).standard_normal((BATCH, SEQ, DIM)).astype("float32")
    return (paddle.to_tensor(x),)


def loss(out):
    return (out ** 2).mean()
