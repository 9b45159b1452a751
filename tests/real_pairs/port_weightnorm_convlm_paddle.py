"""Hand-written port, paddle side: a gated convolutional language model (Dauphin et al. 2017, GCNN) (written by "person A").

Sizes: vocab 40, embedding 24, 24 channels, 3 gated residual blocks of kernel 3, sequence length
16, batch 2. Input: positional `input_ids` [2, 16] int64 (numpy rng seed 36). Output: logits
[2, 16, 40].

Math (both sides): e = Embedding(ids); h = WN-Linear(e) (24 -> 24, weight normalised over the
output features); each block: h = (A * sigmoid(B) + h) * sqrt(0.5), with A = causal WN-conv(h)
and B = causal WN-conv(h) (kernel 3, output t sees inputs t-2..t); logits = Linear(h) (plain).
Weight normalisation: w = g * v / ||v||, one g per output channel (per output feature of the
Linear).

Paddle idioms on this side:
- root `GatedConvLM`: `embed` nn.Embedding(40, 24), `proj_in` nn.Linear(24, 24) under
  `paddle.nn.utils.weight_norm(..., dim=1)` (a paddle Linear weight is [in, out], so the
  per-output-feature norm is dim=1: registers `weight_g` [24] and `weight_v` [24, 24], and keeps
  the recomputed `weight` as a BUFFER), `blocks` LayerList of `CausalGLUBlock`, `lm_head`
  nn.Linear(24, 40).
- activations stay [B, L, C] everywhere (channels last): the convolutions are
  nn.Conv1D(..., data_format="NLC").
- `CausalGLUBlock`: TWO separate convolutions `conv_value` (A) and `conv_gate` (B), each
  Conv1D(24, 24, 3, padding=2) under `paddle.nn.utils.weight_norm` (dim 0: `weight_g` [24],
  `weight_v` [24, 24, 3], buffer `weight`). Causality by PAD AND SLICE: the conv pads 2 on both
  ends (output length L + 2) and the block keeps the first L outputs. GLU inline
  (`a * F.sigmoid(b)`), residual and the sqrt(0.5) scale inline.
- model() gives g trained-looking values (||v|| times U(0.6, 1.4)) and the biases / embedding
  seeded non-zero values, so no weight norm is an identity.

The torch side (port_weightnorm_convlm_torch.py) was written independently: channels-first
activations, ONE fused Conv1d(24, 48, 3) per block under torch's parametrized weight_norm,
explicit left padding with F.pad, an nn.GLU module.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_wn_linear_dim0   -> `proj_in` is weight-normalised with paddle's default dim=0, which
                             for a paddle Linear ([in, out] weight) normalises per INPUT row
  paddle_causal_keeps_tail -> the pad-and-slice keeps the LAST L conv outputs (y[:, k-1:])
                             instead of the first L, so output t sees inputs t..t+2 (the future)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn
from paddle.nn.utils import weight_norm

VOCAB, EMB, CH, KSIZE, N_BLOCKS = 40, 24, 24, 3, 3
SEQ, BATCH = 16, 2
OWN_BUGS = {"paddle_wn_linear_dim0", "paddle_causal_keeps_tail"}
OTHER_BUGS = {"torch_residual_scale_0707", "torch_gtu_gate"}


class CausalGLUBlock(nn.Layer):
    def __init__(self, channels, kernel_size, keep_tail=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.keep_tail = keep_tail
        pad = kernel_size - 1
        self.conv_value = weight_norm(nn.Conv1D(channels, channels, kernel_size, padding=pad, data_format="NLC"))
        self.conv_gate = weight_norm(nn.Conv1D(channels, channels, kernel_size, padding=pad, data_format="NLC"))

    def forward(self, x):  # x: [B, L, C]
        seq_len = x.shape[1]
        a = self.conv_value(x)  # [B, L + k - 1, C]
        b = self.conv_gate(x)
        if self.keep_tail:
            a, b = a[:, self.kernel_size - 1:, :], b[:, self.kernel_size - 1:, :]
        else:
            a, b = a[:, :seq_len, :], b[:, :seq_len, :]
        return (a * F.sigmoid(b) + x) * (0.5 ** 0.5)


class GatedConvLM(nn.Layer):
    def __init__(self, wn_dim0=False, keep_tail=False):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMB)
        self.proj_in = weight_norm(nn.Linear(EMB, CH), dim=0 if wn_dim0 else 1)
        self.blocks = nn.LayerList([CausalGLUBlock(CH, KSIZE, keep_tail) for _ in range(N_BLOCKS)])
        self.lm_head = nn.Linear(CH, VOCAB)

    def forward(self, input_ids):
        h = self.proj_in(self.embed(input_ids))
        for block in self.blocks:
            h = block(h)
        return self.lm_head(h)


def _trained_look(m):
    rng = np.random.default_rng(361)
    m.embed.weight.set_value(rng.normal(0.0, 0.6, (VOCAB, EMB)).astype("float32"))
    for _name, layer in m.named_sublayers(include_self=True):
        if hasattr(layer, "weight_g"):
            g = layer.weight_g.numpy()
            layer.weight_g.set_value((g * rng.uniform(0.6, 1.4, g.shape)).astype("float32"))
        if isinstance(layer, (nn.Conv1D, nn.Linear)) and layer.bias is not None:
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_weightnorm_convlm paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = GatedConvLM(wn_dim0=bug == "paddle_wn_linear_dim0", keep_tail=bug == "paddle_causal_keeps_tail")
    _trained_look(m)
    m.eval()
    return m


def _ids():
    return np.random.default_rng(36).integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 16, 40]
    return (output**2).mean()
