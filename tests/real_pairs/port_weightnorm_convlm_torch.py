"""Hand-written port, torch side: a gated convolutional language model (Dauphin et al. 2017, GCNN) (written by "person B").

The same math as port_weightnorm_convlm_paddle.py, re-implemented by hand in a fairseq-like
style: vocab 40, embedding 24, 24 channels, 3 gated residual layers of kernel 3, input
`input_ids` [2, 16] (positional), logits [2, 16, 40].

Torch idioms on this side:
- root `GCNNLanguageModel` registers `embed_tokens` nn.Embedding(40, 24), `layers` (ModuleList
  of `GatedConvLayer`), then `fc_in` nn.Linear(24, 24) under
  `torch.nn.utils.parametrizations.weight_norm` (dim 0 of a torch [out, in] weight:
  `parametrizations.weight.original0` = g [24, 1], `original1` = v [24, 24]), then `fc_out`
  nn.Linear(24, 40) (plain). The root transposes to channels-first [B, C, L] after `fc_in` and
  back before `fc_out`.
- `GatedConvLayer`: ONE fused nn.Conv1d(24, 48, 3, padding=0) under the parametrized
  weight_norm (g [48, 1, 1], v [48, 24, 3]): output channels 0:24 are the value half A, 24:48
  the gate half B. Causality by EXPLICIT LEFT PADDING: F.pad(x, (2, 0)) then the unpadded conv.
  Then an nn.GLU(dim=1) module `glu` (A * sigmoid(B)), the residual, and `self.scale` =
  math.sqrt(0.5).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_residual_scale_0707 -> the residual scale is hard-coded 0.707 instead of sqrt(0.5)
                               (0.70710678): a precision-level slip, -1.5e-4 relative per layer
  torch_gtu_gate            -> the gate module is a gated TANH unit (tanh(A) * sigmoid(B),
                               WaveNet style) instead of the GLU (A * sigmoid(B))
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.parametrizations import weight_norm

VOCAB_SIZE, EMBED_DIM, CONV_DIM, KERNEL, NUM_LAYERS = 40, 24, 24, 3, 3
SEQ_LEN, BATCH = 16, 2
OWN_BUGS = {"torch_residual_scale_0707", "torch_gtu_gate"}
OTHER_BUGS = {"paddle_wn_linear_dim0", "paddle_causal_keeps_tail"}


class GatedTanhUnit(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        a, b = x.chunk(2, dim=self.dim)
        return torch.tanh(a) * torch.sigmoid(b)


class GatedConvLayer(nn.Module):
    def __init__(self, dim, kernel_size, scale, gtu=False):
        super().__init__()
        self.left_pad = kernel_size - 1
        self.scale = scale
        self.conv = weight_norm(nn.Conv1d(dim, 2 * dim, kernel_size, padding=0))
        self.glu = GatedTanhUnit(dim=1) if gtu else nn.GLU(dim=1)

    def forward(self, x):  # x: [B, C, L]
        residual = x
        x = F.pad(x, (self.left_pad, 0))
        x = self.glu(self.conv(x))
        return (x + residual) * self.scale


class GCNNLanguageModel(nn.Module):
    def __init__(self, residual_scale=0.7071067811865476, gtu=False):  # sqrt(0.5)
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB_SIZE, EMBED_DIM)
        self.layers = nn.ModuleList(
            [GatedConvLayer(CONV_DIM, KERNEL, residual_scale, gtu) for _ in range(NUM_LAYERS)]
        )
        self.fc_in = weight_norm(nn.Linear(EMBED_DIM, CONV_DIM))
        self.fc_out = nn.Linear(CONV_DIM, VOCAB_SIZE)

    def forward(self, input_ids):
        x = self.fc_in(self.embed_tokens(input_ids))
        x = x.transpose(1, 2)  # [B, C, L]
        for layer in self.layers:
            x = layer(x)
        return self.fc_out(x.transpose(1, 2))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_weightnorm_convlm torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    scale = 0.707 if bug == "torch_residual_scale_0707" else math.sqrt(0.5)
    m = GCNNLanguageModel(residual_scale=scale, gtu=bug == "torch_gtu_gate")
    return m.eval()


def _ids():
    return np.random.default_rng(36).integers(0, VOCAB_SIZE, (BATCH, SEQ_LEN)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 16, 40]
    return (output**2).mean()
