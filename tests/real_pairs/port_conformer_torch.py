"""Hand-written port, torch side: a tiny Conformer encoder for [B, T, F] features (written by
"person B").

Same math as port_conformer_paddle.py, in torch's idioms:
  - `input_linear`, then `layers.0..1` (ConformerLayer), then `classifier`;
  - each layer registers `ff_macaron`, `ff_final` (FFModule: ln, w1, nn.SiLU as `swish`, w2), then
    `attn_norm`, `self_attn` (MHSA written by hand: ONE fused `qkv` Linear(32, 96), rows q | k | v,
    each head's 8 rows contiguous; softmax(q k^T / sqrt(8)) v; `out`), `conv_module`, `out_norm`;
    the half-step factors 0.5 are applied in the layer's forward, as on the paddle side;
  - ConvModule stays channels-last where it can: `ln`, `pw_in` = nn.Linear(32, 64) on [B, T, C] (the
    paddle side's 1x1 Conv1D), GLU as chunk(2, dim=-1) + a * sigmoid(b), transpose to [B, C, T] for
    `dw` (Conv1d k=5, groups=32) and `batch_norm` (BatchNorm1d), F.silu, transpose back, `pw_out`
    = nn.Linear(32, 32).

Planted bug (PADIFF_BUG), see port_conformer_truth.json:
  glu_swap -> layer 1's conv module gates the wrong half: b * sigmoid(a) instead of a * sigmoid(b)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

FEATS, D_MODEL, HEADS, FFN, KERNEL, CLASSES, BLOCKS = 16, 32, 4, 64, 5, 10, 2
BATCH, TIME = 2, 12

OWN_BUGS = ("glu_swap",)
OTHER_BUGS = ("paddle_bn_eps", "paddle_ffn_full_step")


class FFModule(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.ln = nn.LayerNorm(d_model)
        self.w1 = nn.Linear(d_model, d_ff)
        self.swish = nn.SiLU()
        self.w2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.w2(self.swish(self.w1(self.ln(x))))


class MHSA(nn.Module):
    def __init__(self, d_model, heads):
        super().__init__()
        self.heads, self.d_head = heads, d_model // heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, self.d_head).permute(2, 0, 3, 1, 4)
        att = torch.softmax(q @ k.transpose(-2, -1) * self.d_head**-0.5, dim=-1)
        return self.out((att @ v).transpose(1, 2).reshape(b, t, d))


class ConvModule(nn.Module):
    def __init__(self, d_model, kernel):
        super().__init__()
        self.swap_glu = False  # the glu_swap bug
        self.ln = nn.LayerNorm(d_model)
        self.pw_in = nn.Linear(d_model, 2 * d_model)
        self.dw = nn.Conv1d(d_model, d_model, kernel, padding=kernel // 2, groups=d_model)
        self.batch_norm = nn.BatchNorm1d(d_model)
        self.pw_out = nn.Linear(d_model, d_model)

    def forward(self, x):  # [B, T, C] -> [B, T, C]
        a, b = self.pw_in(self.ln(x)).chunk(2, dim=-1)
        h = b * torch.sigmoid(a) if self.swap_glu else a * torch.sigmoid(b)
        h = F.silu(self.batch_norm(self.dw(h.transpose(1, 2))))
        return self.pw_out(h.transpose(1, 2))


class ConformerLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.ff_macaron = FFModule(D_MODEL, FFN)
        self.ff_final = FFModule(D_MODEL, FFN)
        self.attn_norm = nn.LayerNorm(D_MODEL)
        self.self_attn = MHSA(D_MODEL, HEADS)
        self.conv_module = ConvModule(D_MODEL, KERNEL)
        self.out_norm = nn.LayerNorm(D_MODEL)

    def forward(self, x):
        x = x + 0.5 * self.ff_macaron(x)
        x = x + self.self_attn(self.attn_norm(x))
        x = x + self.conv_module(x)
        x = x + 0.5 * self.ff_final(x)
        return self.out_norm(x)


class Conformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_linear = nn.Linear(FEATS, D_MODEL)
        self.layers = nn.ModuleList(ConformerLayer() for _ in range(BLOCKS))
        self.classifier = nn.Linear(D_MODEL, CLASSES)

    def forward(self, x):  # [B, T, F] -> [B, T, CLASSES]
        x = self.input_linear(x)
        for layer in self.layers:
            x = layer(x)
        return self.classifier(x)


def model():
    torch.manual_seed(0)
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS + OTHER_BUGS:
        raise ValueError(f"port_conformer: unknown PADIFF_BUG {bug!r}")
    m = Conformer()
    m.eval()
    if bug == "glu_swap":
        m.layers[1].conv_module.swap_glu = True
    return m


def _arrays():
    rng = np.random.default_rng(5)
    return rng.standard_normal((BATCH, TIME, FEATS)).astype("float32")


def inputs():
    return (torch.from_numpy(_arrays()),), {}


def loss(output):
    # logits [B, T, CLASSES] from a Linear after the final LayerNorm: a mean of squares
    return (output**2).mean()
