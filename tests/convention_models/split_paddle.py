"""Two towers, paddle side: parts split, fused, nested and registered differently from the torch
side (split_torch.py), all of it correct:

* the sequence tower (``seq``) registered first here, the token tower (``tok``) first there;
* a causal depthwise Conv1D fed an input padded outside the module (here) against one padding
  inside and trimmed after (there);
* a hand-written attention with a fused ``qkv`` Linear and ``proj`` against torch's
  ``nn.MultiheadAttention`` (packed ``in_proj_weight``, an ``out_proj`` it never calls);
* two feed-forward blocks, the same on both sides;
* a two-layer ``nn.LSTM`` against two one-layer LSTMs;
* a 0-d ``logit_scale`` against a ``[1]`` one.

PADIFF_BUG (this side): paddle_ffn_reuse -> feed-forward block 1 runs block 0's module;
paddle_attn_scale -> the attention scales by 1/d instead of 1/sqrt(head_dim)."""
import math

import numpy as np
import paddle
import paddle.nn.functional as F
from _common import B, D, V, bug, hidden, ids
from paddle import nn

HEADS, K = 4, 3


class SelfAttention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)
        self.scale = 1 / D if bug() == "paddle_attn_scale" else 1 / math.sqrt(D // HEADS)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(x).reshape([b, s, 3, HEADS, D // HEADS]).transpose([2, 0, 3, 1, 4])
        p = F.softmax(paddle.matmul(q, k, transpose_y=True) * self.scale, axis=-1)
        return self.proj(paddle.matmul(p, v).transpose([0, 2, 1, 3]).reshape([b, s, D]))


class FFN(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(D, 2 * D), nn.Linear(2 * D, D)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(x)))


class SeqTower(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1D(D, D, K, groups=D)
        self.norm = nn.LayerNorm(D)
        self.attn = SelfAttention()
        self.ffns = nn.LayerList([FFN(), FFN()])

    def forward(self, x):
        h = self.conv(F.pad(x.transpose([0, 2, 1]), [K - 1, 0], data_format="NCL")).transpose([0, 2, 1])
        x = x + self.attn(self.norm(F.silu(h)))
        x = self.ffns[0](x)
        x = self.ffns[0](x) if bug() == "paddle_ffn_reuse" else self.ffns[1](x)
        return x.mean(axis=1)


class TokTower(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        self.lstm = nn.LSTM(D, D, num_layers=2)
        self.norm = nn.LayerNorm(D)

    def forward(self, t):
        y, _ = self.lstm(self.embed(t))
        return self.norm(y[:, -1])


class Towers(nn.Layer):
    def __init__(self):
        super().__init__()
        self.seq = SeqTower()
        self.tok = TokTower()
        self.logit_scale = self.create_parameter([], default_initializer=nn.initializer.Constant(math.log(10.0)))

    def forward(self, x, t):
        a = F.normalize(self.seq(x), axis=-1)
        b = F.normalize(self.tok(t), axis=-1)
        return self.logit_scale.exp() * paddle.matmul(a, b, transpose_y=True)


def model():
    paddle.seed(0)
    m = Towers()
    # paddle 3.3.1 on CPU: an nn.LSTM in eval mode fails in backward ("Tensor holds no memory",
    # RnnGradNode), with or without a recorder; train mode is the same computation here (no dropout)
    m.train()
    return m


def inputs():
    return (paddle.to_tensor(hidden()), paddle.to_tensor(ids()[:, :5])), {}


def loss(out):
    return F.cross_entropy(out, paddle.arange(B, dtype="int64"))


_ = np  # the shared inputs are numpy arrays
