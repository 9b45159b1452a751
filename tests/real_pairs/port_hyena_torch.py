"""Hand-written port, torch side: a tiny Hyena-style long-convolution LM (written by "person B").

The same math as port_hyena_paddle.py, re-implemented by hand. Sizes: vocab 64, d_model 32,
sequence length 16, batch 2, 2 blocks, short conv kernel 3, positional table width 5, filter MLP
width 16, pre-LayerNorm blocks (eps 1e-5) with a feed-forward 32 -> 64 -> 32 (nn.GELU, erf), a
final LayerNorm and an untied `head` (no bias).

Torch idioms on this side:
- root `Hyena`: `tok_emb`, `layers` = ModuleList of `HyenaBlock`, `ln_f`, `head`.
- `HyenaBlock`: `ln_1`, `mix`, `ln_2`, `ff` = nn.Sequential(Linear, GELU, Linear).
- `HyenaMix`: ONE packed `proj_in` Linear(32, 96) whose output rows are (v | x1 | x2) — a
  different block order from the paddle in_proj (x0 | x1 | v); `conv_short` =
  nn.Conv1d(96, 96, 3, groups=96) WITHOUT padding, applied after F.pad(..., (2, 0)) (causal left
  pad, no trim); `kernel` (LongFilter, forward(L) -> h [32, L]); `long_conv` (CausalLongConv,
  holds the skip parameter `D` [32]); `proj_out`. y = x1 * long_conv(x2 * v, h).
- `LongFilter` RECOMPUTES the sinusoidal table (t, cos(f w), -sin(f w)) and the decay rates with
  torch ops in every forward (no buffers), runs `mlp` = nn.Sequential(Linear(5, 16), Sine(16),
  Linear(16, 16), Sine(16), Linear(16, 32, no bias)) with TWO separate Sine modules (each its own
  `freq` [16]) and multiplies by exp(-t * |rate|) + shift inline.
- `CausalLongConv` is a DIRECT causal convolution: F.conv1d of the input left-padded by L - 1 with
  the flipped kernel, groups = channels (the same function as paddle's FFT padded to 2L).

Planted bugs (PADIFF_BUG), see port_hyena_truth.json; the paddle side's bug names are accepted
and ignored, any other name raises ValueError:
  torch_split_order -> the packed projection is unpacked as `x1, x2, v = chunk(3)` (the order
                       of the reference code) although its rows are (v | x1 | x2): the outer gate
                       is the value branch
  torch_decay_sign  -> the window is exp(-t * rate) with the (negative) rates instead of
                       exp(-t * |rate|): the filter grows along the sequence instead of decaying
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB, D_MODEL, SEQ, BATCH, N_LAYER = 64, 32, 16, 2, 2
EMB_DIM, FILTER_ORDER, SHORT_K = 5, 16, 3
FAST_DECAY_PCT, SLOW_DECAY_PCT, TARGET, SHIFT = 0.3, 1.5, 1e-2, 0.05
OWN_BUGS = {"torch_split_order", "torch_decay_sign"}
OTHER_BUGS = {"paddle_fft_circular"}


class Sine(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.freq = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return torch.sin(x * self.freq)


class LongFilter(nn.Module):
    """forward(L) -> the implicit long filter h [d_model, L]."""

    def __init__(self, d_model, emb_dim=EMB_DIM, hidden=FILTER_ORDER, decay_sign_bug=False):
        super().__init__()
        self.d_model, self.emb_dim = d_model, emb_dim
        self.decay_sign_bug = decay_sign_bug
        self.mlp = nn.Sequential(
            nn.Linear(emb_dim, hidden),
            Sine(hidden),
            nn.Linear(hidden, hidden),
            Sine(hidden),
            nn.Linear(hidden, d_model, bias=False),
        )

    def positions(self, L):
        t = torch.linspace(0, 1, L).unsqueeze(-1)  # [L, 1]
        n_bands = (self.emb_dim - 1) // 2
        omega = 2 * math.pi * torch.arange(L, dtype=torch.float32) / L
        freqs = torch.linspace(1e-4, n_bands - 1, n_bands)
        angle = omega[:, None] * freqs[None, :]  # [L, bands]
        # exp(-i f w) = cos(f w) - i sin(f w)
        return torch.cat([t, torch.cos(angle), -torch.sin(angle)], dim=-1), t

    def forward(self, L):
        table, t = self.positions(L)
        h = self.mlp(table)  # [L, D]
        rate = torch.linspace(math.log(TARGET) / SLOW_DECAY_PCT, math.log(TARGET) / FAST_DECAY_PCT, self.d_model)
        window = torch.exp(-t * rate) if self.decay_sign_bug else torch.exp(-t * rate.abs())
        return (h * (window + SHIFT)).transpose(0, 1)  # [D, L]


class CausalLongConv(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.D = nn.Parameter(torch.randn(channels))

    def forward(self, u, h):
        """u [B, C, L], h [C, L]: y_t = sum_{s <= t} h_{t-s} u_s + D u_t."""
        L = u.shape[-1]
        y = F.conv1d(F.pad(u, (L - 1, 0)), h.flip(-1).unsqueeze(1), groups=u.shape[1])
        return y + u * self.D.unsqueeze(-1)


class HyenaMix(nn.Module):
    def __init__(self, d_model, split_bug=False, decay_sign_bug=False):
        super().__init__()
        self.split_bug = split_bug
        self.proj_in = nn.Linear(d_model, 3 * d_model)
        self.conv_short = nn.Conv1d(3 * d_model, 3 * d_model, SHORT_K, groups=3 * d_model)
        self.kernel = LongFilter(d_model, decay_sign_bug=decay_sign_bug)
        self.long_conv = CausalLongConv(d_model)
        self.proj_out = nn.Linear(d_model, d_model)

    def forward(self, x):
        L = x.shape[1]
        z = self.proj_in(x).transpose(1, 2)  # [B, 3D, L]
        z = self.conv_short(F.pad(z, (SHORT_K - 1, 0)))
        if self.split_bug:
            x1, x2, v = z.chunk(3, dim=1)
        else:
            v, x1, x2 = z.chunk(3, dim=1)
        h = self.kernel(L)
        y = x1 * self.long_conv(x2 * v, h)
        return self.proj_out(y.transpose(1, 2))


class HyenaBlock(nn.Module):
    def __init__(self, d_model, split_bug=False, decay_sign_bug=False):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model)
        self.mix = HyenaMix(d_model, split_bug, decay_sign_bug)
        self.ln_2 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, 2 * d_model), nn.GELU(), nn.Linear(2 * d_model, d_model))

    def forward(self, x):
        x = x + self.mix(self.ln_1(x))
        return x + self.ff(self.ln_2(x))


class Hyena(nn.Module):
    def __init__(self, split_bug=False, decay_sign_bug=False):
        super().__init__()
        self.tok_emb = nn.Embedding(VOCAB, D_MODEL)
        self.layers = nn.ModuleList([HyenaBlock(D_MODEL, split_bug, decay_sign_bug) for _ in range(N_LAYER)])
        self.ln_f = nn.LayerNorm(D_MODEL)
        self.head = nn.Linear(D_MODEL, VOCAB, bias=False)

    def forward(self, input_ids):
        x = self.tok_emb(input_ids)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.ln_f(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_hyena torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = Hyena(split_bug=bug == "torch_split_order", decay_sign_bug=bug == "torch_decay_sign")
    return m.eval()


def _ids():
    rng = np.random.default_rng(5)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 16, 64]
    return (output**2).mean()
