"""Hand-written port, paddle side: a tiny Conformer encoder for [B, T, F] features (written by
"person A").

    embed (Linear 16 -> 32)
    blocks.0..1: ConformerBlock (macaron):
        x = x + 0.5 * ffn1(x)                 FeedForward: norm, fc1 (32 -> 64), act (nn.Swish), fc2
        x = x + mha(norm_mha(x))              paddle nn.MultiHeadAttention(32, 4): q/k/v/out_proj
        x = x + conv(x)                       ConvModule in [B, C, T]: norm (LayerNorm on [B, T, C]),
                                              transpose, pointwise1 (Conv1D 1x1 32 -> 64), F.glu(axis=1),
                                              depthwise (Conv1D k=5, groups=32), bn (BatchNorm1D),
                                              act (nn.Swish), pointwise2 (Conv1D 1x1 32 -> 32), transpose
        x = x + 0.5 * ffn2(x)
        x = norm_final(x)
    head (Linear 32 -> 10)

Eval mode (dropout 0 anyway); the BatchNorm1D layers get non-trivial running statistics and affine
parameters, and every LayerNorm a non-trivial gamma / beta, in model() (a fixed numpy generator).

The torch side (port_conformer_torch.py) was written independently: a hand-written attention with
one fused qkv Linear, the conv module's pointwise convs as nn.Linear on [B, T, C], GLU by chunk +
sigmoid, a BatchNorm1d named `batch_norm`, nn.SiLU.

Planted bugs on this side (PADIFF_BUG):
  paddle_bn_eps        -> block 0's BatchNorm1D is built with epsilon=1e-3 (paddle's BatchNorm1D
                          default is 1e-5, like torch's)
  paddle_ffn_full_step -> block 0 adds its first (macaron) FFN with factor 1.0 instead of 0.5
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

FEATS, D_MODEL, HEADS, FFN, KERNEL, CLASSES, BLOCKS = 16, 32, 4, 64, 5, 10, 2
BATCH, TIME = 2, 12

OWN_BUGS = ("paddle_bn_eps", "paddle_ffn_full_step")
OTHER_BUGS = ("glu_swap",)


class FeedForward(nn.Layer):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, d_ff)
        self.act = nn.Swish()
        self.fc2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(self.norm(x))))


class ConvModule(nn.Layer):
    def __init__(self, d_model, kernel, bn_eps=1e-5):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.pointwise1 = nn.Conv1D(d_model, 2 * d_model, 1)
        self.depthwise = nn.Conv1D(d_model, d_model, kernel, padding=kernel // 2, groups=d_model)
        self.bn = nn.BatchNorm1D(d_model, epsilon=bn_eps)
        self.act = nn.Swish()
        self.pointwise2 = nn.Conv1D(d_model, d_model, 1)

    def forward(self, x):  # [B, T, C] -> [B, T, C]
        h = self.norm(x).transpose([0, 2, 1])  # [B, C, T]
        h = F.glu(self.pointwise1(h), axis=1)  # first half * sigmoid(second half)
        h = self.act(self.bn(self.depthwise(h)))
        return self.pointwise2(h).transpose([0, 2, 1])


class ConformerBlock(nn.Layer):
    def __init__(self, bn_eps=1e-5):
        super().__init__()
        self.ffn1_scale = 0.5
        self.ffn1 = FeedForward(D_MODEL, FFN)
        self.norm_mha = nn.LayerNorm(D_MODEL)
        self.mha = nn.MultiHeadAttention(D_MODEL, HEADS)
        self.conv = ConvModule(D_MODEL, KERNEL, bn_eps)
        self.ffn2 = FeedForward(D_MODEL, FFN)
        self.norm_final = nn.LayerNorm(D_MODEL)

    def forward(self, x):
        x = x + self.ffn1_scale * self.ffn1(x)
        h = self.norm_mha(x)
        x = x + self.mha(h, h, h)
        x = x + self.conv(x)
        x = x + 0.5 * self.ffn2(x)
        return self.norm_final(x)


class ConformerEncoder(nn.Layer):
    def __init__(self, bn_eps0=1e-5):
        super().__init__()
        self.embed = nn.Linear(FEATS, D_MODEL)
        self.blocks = nn.LayerList([ConformerBlock(bn_eps0 if i == 0 else 1e-5) for i in range(BLOCKS)])
        self.head = nn.Linear(D_MODEL, CLASSES)

    def forward(self, feats):  # [B, T, F] -> [B, T, CLASSES]
        x = self.embed(feats)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def _set_trained_state(m):
    """Non-trivial norm state (as after training): BatchNorm running mean/var, gamma, beta, and
    LayerNorm gamma/beta away from 1/0 (so that a mis-paired norm would show)."""
    rng = np.random.default_rng(7)
    for _, sub in m.named_sublayers():
        if isinstance(sub, nn.LayerNorm):
            c = sub.weight.shape[0]
            sub.weight.set_value(rng.uniform(0.7, 1.3, c).astype("float32"))
            sub.bias.set_value(rng.normal(0.0, 0.1, c).astype("float32"))
    for block in m.blocks:
        bn = block.conv.bn
        c = bn._mean.shape[0]
        bn._mean.set_value(rng.normal(0.0, 0.3, c).astype("float32"))
        bn._variance.set_value(rng.uniform(0.3, 1.5, c).astype("float32"))
        bn.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
        bn.bias.set_value(rng.normal(0.0, 0.2, c).astype("float32"))


def model():
    paddle.seed(0)
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS + OTHER_BUGS:
        raise ValueError(f"port_conformer: unknown PADIFF_BUG {bug!r}")
    m = ConformerEncoder(bn_eps0=1e-3 if bug == "paddle_bn_eps" else 1e-5)
    _set_trained_state(m)
    m.eval()
    if bug == "paddle_ffn_full_step":
        m.blocks[0].ffn1_scale = 1.0
    return m


def _arrays():
    rng = np.random.default_rng(5)
    return rng.standard_normal((BATCH, TIME, FEATS)).astype("float32")


def inputs():
    return (paddle.to_tensor(_arrays()),), {}


def loss(output):
    # logits [B, T, CLASSES] from a Linear after the final LayerNorm: a mean of squares
    return (output**2).mean()
