"""Hand-written port, torch side: a tiny FNet encoder (written by "person B").

The same math as port_fnet_paddle.py, re-implemented by hand. Sizes: vocab 64, hidden 32,
intermediate 64, 2 layers, max positions 32, 2 token types, sequence length 12, batch 2,
LayerNorm eps 1e-12, GELU tanh approximation.

Torch idioms on this side:
- root `FNet`: `embeddings`, `blocks` (ModuleList of `FNetBlock`), `pooler` = nn.Sequential(
  Linear, Tanh) applied to h[:, 0].
- `Embeddings` registers `tok`, `pos`, `seg`, `proj` and only then `norm` (called before
  proj); a non-persistent buffer `position_ids` = arange(32)[None] sliced to the sequence
  length (the HF idiom).
- `FNetBlock`: NO module for the Fourier mixing: `fourier()` is a plain method doing two 1-D
  FFTs in the other order than paddle's fft2 (first over the hidden axis, then over the
  sequence axis), real part; registers `ff` = nn.Sequential(Linear, GELU(approximate="tanh"),
  Linear) before `ln_mix` and `ln_ff`; post-LN: x = ln_mix(x + fourier(x)),
  x = ln_ff(x + ff(x)).
forward(input_ids, token_type_ids) returns (sequence_output, pooled).

Planted bugs (PADIFF_BUG), see port_fnet_truth.json; the paddle side's bug name is accepted and
ignored, any other name raises ValueError:
  torch_fft_batch_axis  -> the second FFT runs over dim=0 (the BATCH axis: the porter assumed a
                           [seq, batch, hidden] layout) instead of dim=-2 (the sequence axis)
  torch_position_offset -> the position ids are sliced as position_ids[:, 1:L + 1] instead of
                           [:, :L] (positions start at 1)
"""
import os

import numpy as np
import torch
from torch import nn

VOCAB, HIDDEN, INTER, LAYERS, MAX_POS, TYPES = 64, 32, 64, 2, 32, 2
LN_EPS = 1e-12
BATCH, SEQ = 2, 12
OWN_BUGS = {"torch_fft_batch_axis", "torch_position_offset"}
OTHER_BUGS = {"paddle_embed_ln_eps"}


class Embeddings(nn.Module):
    def __init__(self, position_offset=False):
        super().__init__()
        self.position_offset = position_offset
        self.tok = nn.Embedding(VOCAB, HIDDEN)
        self.pos = nn.Embedding(MAX_POS, HIDDEN)
        self.seg = nn.Embedding(TYPES, HIDDEN)
        self.proj = nn.Linear(HIDDEN, HIDDEN)
        self.norm = nn.LayerNorm(HIDDEN, eps=LN_EPS)
        self.register_buffer("position_ids", torch.arange(MAX_POS).unsqueeze(0), persistent=False)

    def forward(self, input_ids, token_type_ids):
        n = input_ids.size(1)
        start = 1 if self.position_offset else 0
        pos_ids = self.position_ids[:, start:start + n]
        x = self.tok(input_ids) + self.pos(pos_ids) + self.seg(token_type_ids)
        return self.proj(self.norm(x))


class FNetBlock(nn.Module):
    def __init__(self, batch_axis=False):
        super().__init__()
        self.seq_dim = 0 if batch_axis else -2
        self.ff = nn.Sequential(nn.Linear(HIDDEN, INTER), nn.GELU(approximate="tanh"), nn.Linear(INTER, HIDDEN))
        self.ln_mix = nn.LayerNorm(HIDDEN, eps=LN_EPS)
        self.ln_ff = nn.LayerNorm(HIDDEN, eps=LN_EPS)

    def fourier(self, x):
        return torch.fft.fft(torch.fft.fft(x, dim=-1), dim=self.seq_dim).real

    def forward(self, x):
        x = self.ln_mix(x + self.fourier(x))
        return self.ln_ff(x + self.ff(x))


class FNet(nn.Module):
    def __init__(self, batch_axis=False, position_offset=False):
        super().__init__()
        self.embeddings = Embeddings(position_offset)
        self.blocks = nn.ModuleList([FNetBlock(batch_axis) for _ in range(LAYERS)])
        self.pooler = nn.Sequential(nn.Linear(HIDDEN, HIDDEN), nn.Tanh())

    def forward(self, input_ids, token_type_ids):
        h = self.embeddings(input_ids, token_type_ids)
        for blk in self.blocks:
            h = blk(h)
        return h, self.pooler(h[:, 0])


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_fnet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = FNet(batch_axis=bug == "torch_fft_batch_axis", position_offset=bug == "torch_position_offset")
    return m.eval()


def _ids():
    rng = np.random.default_rng(5)
    ids = rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")
    types = np.zeros((BATCH, SEQ), dtype="int64")
    types[0, 7:] = 1
    types[1, 5:] = 1
    return ids, types


def inputs():
    ids, types = _ids()
    return (torch.from_numpy(ids),), {"token_type_ids": torch.from_numpy(types)}


def loss(output):
    # (sequence_output [2, 12, 32], pooled [2, 32])
    seq, pooled = output
    return (seq**2).mean() + (pooled**2).mean()
