"""Hand-written port, torch side: a fairseq-style LightConv / DynamicConv encoder (written by "person B").

The same math as port_lightconv_paddle.py, re-implemented by hand in the time-major style of
fairseq's LightConvEncoder: input `src_tokens` [2, 10] (positional), vocab 40, width 24, 3 heads,
FFN 48, layer 0 a lightweight conv (K=3), layer 1 a dynamic conv (K=5), pre-norm residual
blocks and a final LayerNorm; output [2, 10, 24] (batch-major again at the end).

Torch idioms on this side:
- root `LightConvEncoderModel`: `embed_tokens`, `embed_positions` (positions 2..11 as fairseq's
  make_positions gives them), F.dropout inline, a transpose to [T, B, C] before the layers,
  `layers` (ModuleList), `layer_norm`, and a transpose back.
- `LightConvEncoderLayer` registers `linear1` (ONE fused GLU projection Linear(24, 48): rows
  0:24 are the value half, rows 24:48 the gate half), `act` (nn.GLU(dim=-1)), `conv`,
  `linear2`, `fc1`, `fc2`, then `layer_norms` (ModuleList of two LayerNorms, fairseq style);
  the FFN relu is F.relu inline.
- `LightweightConv1dTBC`: `weight` [H, K] (no singleton axis), `bias` [C]; softmax over K,
  F.dropout inline (off in eval); the input [T, B, C] is regrouped to [B * R, H, T] (channel
  c = h * R + r, i.e. head c // R) and convolved with F.conv1d(groups=H).
- `DynamicConv1dTBC`: `weight_linear` Linear(24, 15) whose output rows are KERNEL-major (row
  k * H + h), `bias` [C]; the padded input is unfolded along time with Tensor.unfold.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_lconv_head_interleave   -> LightweightConv1dTBC regroups the channels with a plain
                                   view(-1, H, T) (as fairseq's batch-major LightweightConv1d
                                   does), so channel c uses head c % H instead of c // R
  torch_ffn_residual_after_norm -> the FFN block takes its residual AFTER layer_norms[1]
                                   (residual = normed x), in both layers
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB_SIZE, EMBED_DIM, NUM_HEADS, FFN_DIM = 40, 24, 3, 48
MAX_POSITIONS, PADDING_IDX = 16, 1
KERNEL_SIZES = [3, 5]
DROPOUT, WEIGHT_DROPOUT = 0.1, 0.1
OWN_BUGS = {"torch_lconv_head_interleave", "torch_ffn_residual_after_norm"}
OTHER_BUGS = {"paddle_glu_uses_silu", "paddle_dconv_kernel_bf16"}


class LightweightConv1dTBC(nn.Module):
    def __init__(self, input_size, kernel_size, padding_l, num_heads, weight_dropout, interleave=False):
        super().__init__()
        self.input_size, self.kernel_size, self.padding_l = input_size, kernel_size, padding_l
        self.num_heads, self.weight_dropout = num_heads, weight_dropout
        self.interleave = interleave
        self.weight = nn.Parameter(torch.empty(num_heads, kernel_size))
        self.bias = nn.Parameter(torch.zeros(input_size))
        nn.init.xavier_uniform_(self.weight)

    def forward(self, x):  # T x B x C
        T, B, C = x.size()
        H = self.num_heads
        R = C // H
        weight = F.softmax(self.weight, dim=1)
        weight = F.dropout(weight, self.weight_dropout, training=self.training)
        inp = x.permute(1, 2, 0).contiguous()  # B x C x T
        if self.interleave:
            inp = inp.view(-1, H, T)
        else:
            inp = inp.view(B, H, R, T).transpose(1, 2).reshape(B * R, H, T)
        out = F.conv1d(inp, weight.unsqueeze(1), padding=self.padding_l, groups=H)
        if self.interleave:
            out = out.view(B, C, T)
        else:
            out = out.view(B, R, H, T).transpose(1, 2).reshape(B, C, T)
        return out.permute(2, 0, 1) + self.bias


class DynamicConv1dTBC(nn.Module):
    def __init__(self, input_size, kernel_size, padding_l, num_heads, weight_dropout):
        super().__init__()
        self.input_size, self.kernel_size, self.padding_l = input_size, kernel_size, padding_l
        self.num_heads, self.weight_dropout = num_heads, weight_dropout
        self.weight_linear = nn.Linear(input_size, kernel_size * num_heads)
        self.bias = nn.Parameter(torch.zeros(input_size))

    def forward(self, x):  # T x B x C
        T, B, C = x.size()
        K, H = self.kernel_size, self.num_heads
        weight = self.weight_linear(x).view(T, B, K, H)
        weight = F.softmax(weight, dim=2)
        weight = F.dropout(weight, self.weight_dropout, training=self.training)
        xp = F.pad(x, (0, 0, 0, 0, self.padding_l, K - 1 - self.padding_l))
        cols = xp.unfold(0, K, 1)  # T x B x C x K
        cols = cols.reshape(T, B, H, C // H, K)
        out = torch.einsum("tbhrk,tbkh->tbhr", cols, weight).reshape(T, B, C)
        return out + self.bias


class LightConvEncoderLayer(nn.Module):
    def __init__(self, kernel_size, dynamic, interleave=False, residual_after_norm=False):
        super().__init__()
        self.residual_after_norm = residual_after_norm
        self.linear1 = nn.Linear(EMBED_DIM, 2 * EMBED_DIM)
        self.act = nn.GLU(dim=-1)
        if dynamic:
            self.conv = DynamicConv1dTBC(EMBED_DIM, kernel_size, kernel_size // 2, NUM_HEADS, WEIGHT_DROPOUT)
        else:
            self.conv = LightweightConv1dTBC(EMBED_DIM, kernel_size, kernel_size // 2, NUM_HEADS, WEIGHT_DROPOUT,
                                             interleave=interleave)
        self.linear2 = nn.Linear(EMBED_DIM, EMBED_DIM)
        self.fc1 = nn.Linear(EMBED_DIM, FFN_DIM)
        self.fc2 = nn.Linear(FFN_DIM, EMBED_DIM)
        self.layer_norms = nn.ModuleList([nn.LayerNorm(EMBED_DIM) for _ in range(2)])

    def forward(self, x):
        residual = x
        x = self.layer_norms[0](x)
        x = self.act(self.linear1(x))
        x = self.conv(x)
        x = self.linear2(x)
        x = residual + x
        residual = x
        x = self.layer_norms[1](x)
        if self.residual_after_norm:
            residual = x
        x = F.relu(self.fc1(x))
        x = self.fc2(x)
        return residual + x


class LightConvEncoderModel(nn.Module):
    def __init__(self, interleave=False, residual_after_norm=False):
        super().__init__()
        self.embed_scale = math.sqrt(EMBED_DIM)
        self.embed_tokens = nn.Embedding(VOCAB_SIZE, EMBED_DIM)
        self.embed_positions = nn.Embedding(MAX_POSITIONS + PADDING_IDX + 1, EMBED_DIM)
        self.layers = nn.ModuleList([
            LightConvEncoderLayer(k, dynamic=i == 1, interleave=interleave, residual_after_norm=residual_after_norm)
            for i, k in enumerate(KERNEL_SIZES)
        ])
        self.layer_norm = nn.LayerNorm(EMBED_DIM)

    def forward(self, src_tokens):
        bsz, seqlen = src_tokens.shape
        positions = torch.arange(seqlen, device=src_tokens.device) + PADDING_IDX + 1
        x = self.embed_scale * self.embed_tokens(src_tokens)
        x = x + self.embed_positions(positions.unsqueeze(0).expand(bsz, seqlen))
        x = F.dropout(x, p=DROPOUT, training=self.training)
        x = x.transpose(0, 1)  # B x T x C -> T x B x C
        for layer in self.layers:
            x = layer(x)
        x = self.layer_norm(x)
        return x.transpose(0, 1)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_lightconv torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = LightConvEncoderModel(interleave=bug == "torch_lconv_head_interleave",
                              residual_after_norm=bug == "torch_ffn_residual_after_norm")
    return m.eval()


def _tokens():
    rng = np.random.default_rng(37)
    return rng.integers(2, VOCAB_SIZE, size=(2, 10)).astype("int64")


def inputs():
    return (torch.from_numpy(_tokens()),), {}


def loss(output):
    # encoder states [2, 10, 24]
    return (output**2).mean()
