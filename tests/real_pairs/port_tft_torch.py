"""Hand-written port, torch side: a tiny Temporal Fusion Transformer (written by "person B").

The same math as port_tft_paddle.py, re-implemented by hand: hidden 16, 3 static real
covariates, 4 time-varying real inputs, 8 steps, batch 2, 4 heads of 4, 3 quantiles. Inputs
(positional): `x_static` [2, 3], `x_time` [2, 8, 4] (numpy rng seed 31). Output: [2, 8, 3].

Torch idioms on this side:
- root `TFT`: `static_embedding` / `temporal_embedding` (`RealEmbedding`: ONE packed `weight`
  [n_vars, 16] and `bias` [n_vars, 16] parameter each, emb = x[..., None] * weight + bias,
  returning [..., n_vars, 16]), `static_selection`, `static_encoder`, `temporal_selection`,
  `encoder_lstm` (nn.LSTM, batch_first), `lstm_gate`, `enrichment`, `attention`, `attn_gate`,
  `positionwise_grn`, `output_gate`, `head`.
- `GRN` registers `skip` FIRST (only when the widths differ), then `lin_a`, `lin_c` (no bias,
  only with context), `elu` (an nn.ELU module), `lin_i`, ONE fused `glu_proj` Linear(16,
  2 * out) whose output is split by the module-level helper `gated` (F.glu: first half =
  value, second half = gate), and `norm`.
- `VSN` takes a STACKED [..., n_vars, 16] tensor; `weight_network` (GRN), `variable_grns`
  (ModuleList), `softmax` (an nn.Softmax(dim=-1) module); the weighted sum is a matmul of the
  [..., 1, n] weights with the [..., n, 16] stack.
- `StaticCovariateEncoder` (`static_encoder`): `state_h`, `state_c`, `selection`, `enrichment`
  GRNs; it computes the two LSTM states first and returns the tuple (selection, enrichment,
  state_h, state_c).
- `GateAddNorm`: `proj` Linear(16, 32) + `gated` (F.glu), then `norm`.
- `InterpretableMHA`: FUSED `q_proj` / `k_proj` Linear(16, 16) (4 heads x 4, head-major), ONE
  shared `v_proj` Linear(16, 4), `out_proj` Linear(4, 16), a persistent bool `causal_mask`
  buffer [8, 8], and `sdpa` (`ScaledDotProductAttention`, no parameters) that returns the
  attention PROBABILITIES [B, 4, T, T]; the module averages the probabilities over heads FIRST
  and multiplies the shared values once (the same as averaging the head outputs, since the
  value projection is shared).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_glu_halves_swapped -> the `gated` helper takes the FIRST half as the gate and the second
                              as the value (sigmoid(a) * b instead of F.glu's a * sigmoid(b));
                              used by every GRN and every GateAddNorm
  torch_attn_scale_dmodel  -> ScaledDotProductAttention scales the scores by 1 / sqrt(d_model
                              = 16) instead of 1 / sqrt(d_head = 4)
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

D_MODEL, NUM_STATIC, NUM_TIME, SEQ_LEN, NUM_HEADS, NUM_OUT = 16, 3, 4, 8, 4, 3
BATCH = 2
OWN_BUGS = {"torch_glu_halves_swapped", "torch_attn_scale_dmodel"}
OTHER_BUGS = {"paddle_vsn_softmax_axis", "paddle_gate_norm_eps"}


def gated(x, swapped=False):
    """GLU over the last axis: value half first, gate half second."""
    if swapped:
        a, b = x.chunk(2, dim=-1)
        return torch.sigmoid(a) * b
    return F.glu(x, dim=-1)


class RealEmbedding(nn.Module):
    def __init__(self, n_vars, d_model):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_vars, d_model) * 0.5)
        self.bias = nn.Parameter(torch.zeros(n_vars, d_model))

    def forward(self, x):
        return x.unsqueeze(-1) * self.weight + self.bias


class GRN(nn.Module):
    def __init__(self, d_in, d_hidden, d_out, with_context=False, swapped=False):
        super().__init__()
        self.swapped = swapped
        self.skip = nn.Linear(d_in, d_out) if d_in != d_out else None
        self.lin_a = nn.Linear(d_in, d_hidden)
        self.lin_c = nn.Linear(d_hidden, d_hidden, bias=False) if with_context else None
        self.elu = nn.ELU()
        self.lin_i = nn.Linear(d_hidden, d_hidden)
        self.glu_proj = nn.Linear(d_hidden, 2 * d_out)
        self.norm = nn.LayerNorm(d_out)

    def forward(self, a, c=None):
        skip = a if self.skip is None else self.skip(a)
        h = self.lin_a(a)
        if c is not None:
            h = h + self.lin_c(c)
        h = self.lin_i(self.elu(h))
        return self.norm(skip + gated(self.glu_proj(h), self.swapped))


class VSN(nn.Module):
    def __init__(self, n_vars, d_model, with_context=False, swapped=False):
        super().__init__()
        self.weight_network = GRN(n_vars * d_model, d_model, n_vars, with_context, swapped)
        self.variable_grns = nn.ModuleList([GRN(d_model, d_model, d_model, swapped=swapped) for _ in range(n_vars)])
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x, c=None):
        # x: [..., n_vars, d_model]
        w = self.softmax(self.weight_network(x.flatten(-2), c))
        outs = torch.stack([grn(x[..., i, :]) for i, grn in enumerate(self.variable_grns)], dim=-2)
        return (w.unsqueeze(-2) @ outs).squeeze(-2)


class StaticCovariateEncoder(nn.Module):
    def __init__(self, d_model, swapped=False):
        super().__init__()
        self.state_h = GRN(d_model, d_model, d_model, swapped=swapped)
        self.state_c = GRN(d_model, d_model, d_model, swapped=swapped)
        self.selection = GRN(d_model, d_model, d_model, swapped=swapped)
        self.enrichment = GRN(d_model, d_model, d_model, swapped=swapped)

    def forward(self, s):
        h0, c0 = self.state_h(s), self.state_c(s)
        return self.selection(s), self.enrichment(s), h0, c0


class GateAddNorm(nn.Module):
    def __init__(self, d_model, swapped=False):
        super().__init__()
        self.swapped = swapped
        self.proj = nn.Linear(d_model, 2 * d_model)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x, residual):
        return self.norm(gated(self.proj(x), self.swapped) + residual)


class ScaledDotProductAttention(nn.Module):
    def __init__(self, d_head, d_model, wrong_scale=False):
        super().__init__()
        self.scale = 1.0 / math.sqrt(d_model if wrong_scale else d_head)

    def forward(self, q, k, mask):
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        scores = scores.masked_fill(mask, float("-inf"))
        return F.softmax(scores, dim=-1)


class InterpretableMHA(nn.Module):
    def __init__(self, d_model, n_heads, seq_len, wrong_scale=False):
        super().__init__()
        self.n_heads, self.d_head = n_heads, d_model // n_heads
        self.register_buffer("causal_mask", torch.ones(seq_len, seq_len, dtype=torch.bool).triu(1))
        self.q_proj = nn.Linear(d_model, n_heads * self.d_head)
        self.k_proj = nn.Linear(d_model, n_heads * self.d_head)
        self.v_proj = nn.Linear(d_model, self.d_head)
        self.out_proj = nn.Linear(self.d_head, d_model)
        self.sdpa = ScaledDotProductAttention(self.d_head, d_model, wrong_scale)

    def forward(self, x):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.n_heads, self.d_head).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.n_heads, self.d_head).transpose(1, 2)
        v = self.v_proj(x)  # [B, T, d_head], shared by the heads
        probs = self.sdpa(q, k, self.causal_mask[:t, :t])  # [B, H, T, T]
        return self.out_proj(probs.mean(dim=1) @ v)


class TFT(nn.Module):
    def __init__(self, swapped=False, wrong_scale=False):
        super().__init__()
        self.static_embedding = RealEmbedding(NUM_STATIC, D_MODEL)
        self.temporal_embedding = RealEmbedding(NUM_TIME, D_MODEL)
        self.static_selection = VSN(NUM_STATIC, D_MODEL, swapped=swapped)
        self.static_encoder = StaticCovariateEncoder(D_MODEL, swapped)
        self.temporal_selection = VSN(NUM_TIME, D_MODEL, with_context=True, swapped=swapped)
        self.encoder_lstm = nn.LSTM(D_MODEL, D_MODEL, batch_first=True)
        self.lstm_gate = GateAddNorm(D_MODEL, swapped)
        self.enrichment = GRN(D_MODEL, D_MODEL, D_MODEL, with_context=True, swapped=swapped)
        self.attention = InterpretableMHA(D_MODEL, NUM_HEADS, SEQ_LEN, wrong_scale)
        self.attn_gate = GateAddNorm(D_MODEL, swapped)
        self.positionwise_grn = GRN(D_MODEL, D_MODEL, D_MODEL, swapped=swapped)
        self.output_gate = GateAddNorm(D_MODEL, swapped)
        self.head = nn.Linear(D_MODEL, NUM_OUT)

    def forward(self, x_static, x_time):
        s = self.static_selection(self.static_embedding(x_static))
        c_sel, c_enr, h0, c0 = self.static_encoder(s)
        t = x_time.shape[1]
        x = self.temporal_selection(self.temporal_embedding(x_time), c_sel[:, None, :].expand(-1, t, -1))
        out, _ = self.encoder_lstm(x, (h0.unsqueeze(0), c0.unsqueeze(0)))
        y = self.lstm_gate(out, x)
        e = self.enrichment(y, c_enr[:, None, :].expand(-1, t, -1))
        z = self.attn_gate(self.attention(e), e)
        f = self.output_gate(self.positionwise_grn(z), y)
        return self.head(f)  # [B, T, 3]


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_tft torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = TFT(swapped=bug == "torch_glu_halves_swapped", wrong_scale=bug == "torch_attn_scale_dmodel")
    return m.eval()


def _data():
    rng = np.random.default_rng(31)
    static = rng.standard_normal((BATCH, NUM_STATIC)).astype("float32")
    series = rng.standard_normal((BATCH, SEQ_LEN, NUM_TIME)).astype("float32")
    return static, series


def inputs():
    return tuple(torch.from_numpy(a) for a in _data()), {}


def loss(output):
    # quantile forecasts [2, 8, 3]
    return (output**2).mean()
