"""Hand-written port, torch side: a tiny Griffin (RecurrentGemma-style) language model (written by "person B").

The same math as port_griffin_paddle.py, re-implemented by hand in a Hugging Face-like style:
input `input_ids` [2, 12] (positional), logits [2, 12, 50] (tied head, tanh soft cap 30).
vocab 50, width 32, layers (recurrent, attention, recurrent), RG-LRU width 32 (4 gate blocks of
8), causal depthwise conv width 4, local MQA (4 query heads of 8, one k / v head, window 4,
rotary on the first half of each head), gated MLP hidden 64, RMSNorm eps 1e-6, tanh GELU.

Torch idioms on this side:
- root `GriffinForCausalLM`: `embed` (`ScaledEmbedding`, an nn.Embedding subclass with a
  non-persistent `normalizer` buffer = sqrt(32)), `layers` (ModuleList of `GriffinLayer`),
  `norm`; the head is an inline F.linear with `embed.weight`, the soft cap inline.
- `GriffinRMSNorm` stores the DIRECT multiplier `weight` (ones-centred): x * rsqrt(ms + eps) * w.
- `GriffinLayer` registers `mixer`, `mlp`, then `input_norm`, `post_mixer_norm`.
- `RecurrentMixer`: ONE fused `in_proj` Linear(32, 64) giving [x branch | gate branch], `conv1d`
  = nn.Conv1d(32, 32, 4, groups=32, padding=3) on [B, D, T] (the first T outputs kept), `lru`,
  `out_proj`. The recurrent internals stay channels-first [B, D, T].
- `RGLRU`: `a_log` [32] (Mamba-style: the positive rate softplus(.) is exp(a_log)); gates
  `gate_x` / `gate_a` are grouped 1x1 nn.Conv1d(32, 32, 1, groups=4); sqrt(1 - a^2) is computed
  as sqrt(-expm1(2 log a)); the scan is its own module `scan` (`LinearScan`): a parallel scan
  h_t = sum_{s <= t} exp(L_t - L_s) x_s with L = cumsum(log a) over time.
- `LocalMQA`: `wq` Linear(32, 32), ONE fused `wkv` Linear(32, 16) giving [k | v], `wo` (bias),
  `rotary` (`PartialRotaryEmbedding`, a non-persistent `inv_freq` buffer, returns cos / sin);
  banded bool mask from a non-persistent `band` buffer; F.scaled_dot_product_attention.
- `GatedMLP`: `gate_proj`, `up_proj`, `act` (nn.GELU(approximate="tanh")), `down_proj`.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_exact_gelu          -> GatedMLP's `act` is built as nn.GELU() (exact erf) instead of
                               nn.GELU(approximate="tanh"); precision-level
  torch_scan_drops_current  -> LinearScan's causal mask is torch.tril(..., diagonal=-1) instead
                               of diagonal=0, so h_t sums x_s for s < t only (drops x_t)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB_SIZE, HIDDEN, LRU_WIDTH, NUM_GATE_BLOCKS = 50, 32, 32, 4
CONV_KERNEL, INTERMEDIATE = 4, 64
NUM_HEADS, HEAD_DIM, ATTN_WINDOW, ROPE_THETA = 4, 8, 4, 10000.0
LAYER_TYPES = ("recurrent", "attention", "recurrent")
RG_LRU_C, LOGITS_SOFT_CAP, RMS_EPS = 8.0, 30.0, 1e-6
BATCH, SEQ, MAX_POS = 2, 12, 16
OWN_BUGS = {"torch_exact_gelu", "torch_scan_drops_current"}
OTHER_BUGS = {"paddle_conv1d_flipped", "paddle_window_off_by_one"}

_CFG = {"exact_gelu": False, "scan_diag": 0}


class GriffinRMSNorm(nn.Module):
    def __init__(self, dim, eps=RMS_EPS):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class ScaledEmbedding(nn.Embedding):
    def __init__(self, num, dim):
        super().__init__(num, dim)
        self.register_buffer("normalizer", torch.tensor(dim**0.5), persistent=False)

    def forward(self, ids):
        return super().forward(ids) * self.normalizer


class LinearScan(nn.Module):
    """h_t = a_t h_{t-1} + x_t (h_{-1} = 0) for [B, D, T] inputs, given log a."""

    def __init__(self):
        super().__init__()
        self.diagonal = _CFG["scan_diag"]

    def forward(self, log_a, x):
        T = x.shape[-1]
        cum = torch.cumsum(log_a, dim=-1)  # L_t
        diff = cum.unsqueeze(-1) - cum.unsqueeze(-2)  # [B, D, t, s] = L_t - L_s
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=self.diagonal)
        weights = torch.exp(diff.masked_fill(~causal, float("-inf")))
        return torch.einsum("bdts,bds->bdt", weights, x)


class RGLRU(nn.Module):
    def __init__(self, width, blocks):
        super().__init__()
        self.a_log = nn.Parameter(torch.zeros(width))
        self.gate_x = nn.Conv1d(width, width, 1, groups=blocks)
        self.gate_a = nn.Conv1d(width, width, 1, groups=blocks)
        self.scan = LinearScan()

    def forward(self, x, position_ids):  # x [B, D, T]
        gate_x = torch.sigmoid(self.gate_x(x))
        gate_a = torch.sigmoid(self.gate_a(x))
        log_a = -RG_LRU_C * gate_a * torch.exp(self.a_log)[None, :, None]
        multiplier = torch.sqrt(-torch.expm1(2.0 * log_a))
        is_start = (position_ids == 0)[None, None, :]
        multiplier = torch.where(is_start, torch.ones_like(multiplier), multiplier)
        return self.scan(log_a, x * gate_x * multiplier)


class RecurrentMixer(nn.Module):
    def __init__(self):
        super().__init__()
        self.in_proj = nn.Linear(HIDDEN, 2 * LRU_WIDTH)
        self.conv1d = nn.Conv1d(LRU_WIDTH, LRU_WIDTH, CONV_KERNEL, groups=LRU_WIDTH, padding=CONV_KERNEL - 1)
        self.lru = RGLRU(LRU_WIDTH, NUM_GATE_BLOCKS)
        self.out_proj = nn.Linear(LRU_WIDTH, HIDDEN)

    def forward(self, hidden, position_ids):
        T = hidden.shape[1]
        x_branch, y_branch = self.in_proj(hidden).chunk(2, dim=-1)
        y_branch = F.gelu(y_branch, approximate="tanh")
        x_branch = self.conv1d(x_branch.transpose(1, 2))[..., :T]  # [B, D, T]
        x_branch = self.lru(x_branch, position_ids).transpose(1, 2)
        return self.out_proj(x_branch * y_branch)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class PartialRotaryEmbedding(nn.Module):
    def __init__(self, rot_dim, base=ROPE_THETA):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, rot_dim, 2, dtype=torch.float32) / rot_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, position_ids):
        freqs = position_ids.float()[:, None] * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)  # [T, rot_dim]
        return emb.cos(), emb.sin()


class LocalMQA(nn.Module):
    def __init__(self):
        super().__init__()
        self.wq = nn.Linear(HIDDEN, NUM_HEADS * HEAD_DIM, bias=False)
        self.wkv = nn.Linear(HIDDEN, 2 * HEAD_DIM, bias=False)
        self.wo = nn.Linear(NUM_HEADS * HEAD_DIM, HIDDEN, bias=True)
        self.rotary = PartialRotaryEmbedding(HEAD_DIM // 2)
        i = torch.arange(MAX_POS)
        band = (i[:, None] >= i[None, :]) & (i[:, None] - i[None, :] < ATTN_WINDOW)
        self.register_buffer("band", band, persistent=False)

    @staticmethod
    def _rope(x, cos, sin):
        rot, rest = x.chunk(2, dim=-1)
        rot = rot * cos + rotate_half(rot) * sin
        return torch.cat((rot, rest), dim=-1)

    def forward(self, hidden, position_ids):
        B, T, _ = hidden.shape
        q = self.wq(hidden).view(B, T, NUM_HEADS, HEAD_DIM).transpose(1, 2)  # [B, H, T, D]
        k, v = self.wkv(hidden).view(B, T, 2, HEAD_DIM).unbind(dim=2)
        k, v = k.unsqueeze(1), v.unsqueeze(1)  # [B, 1, T, D]
        cos, sin = self.rotary(position_ids)
        q, k = self._rope(q, cos, sin), self._rope(k, cos, sin)
        mask = self.band[:T, :T]
        out = F.scaled_dot_product_attention(q, k.expand(-1, NUM_HEADS, -1, -1),
                                             v.expand(-1, NUM_HEADS, -1, -1), attn_mask=mask)
        return self.wo(out.transpose(1, 2).reshape(B, T, NUM_HEADS * HEAD_DIM))


class GatedMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(HIDDEN, INTERMEDIATE)
        self.up_proj = nn.Linear(HIDDEN, INTERMEDIATE)
        self.act = nn.GELU() if _CFG["exact_gelu"] else nn.GELU(approximate="tanh")
        self.down_proj = nn.Linear(INTERMEDIATE, HIDDEN)

    def forward(self, x):
        return self.down_proj(self.act(self.gate_proj(x)) * self.up_proj(x))


class GriffinLayer(nn.Module):
    def __init__(self, layer_type):
        super().__init__()
        self.mixer = RecurrentMixer() if layer_type == "recurrent" else LocalMQA()
        self.mlp = GatedMLP()
        self.input_norm = GriffinRMSNorm(HIDDEN)
        self.post_mixer_norm = GriffinRMSNorm(HIDDEN)

    def forward(self, hidden, position_ids):
        hidden = hidden + self.mixer(self.input_norm(hidden), position_ids)
        return hidden + self.mlp(self.post_mixer_norm(hidden))


class GriffinForCausalLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = ScaledEmbedding(VOCAB_SIZE, HIDDEN)
        self.layers = nn.ModuleList([GriffinLayer(t) for t in LAYER_TYPES])
        self.norm = GriffinRMSNorm(HIDDEN)

    def forward(self, input_ids):
        position_ids = torch.arange(input_ids.shape[1], device=input_ids.device)
        hidden = self.embed(input_ids)
        for layer in self.layers:
            hidden = layer(hidden, position_ids)
        logits = F.linear(self.norm(hidden), self.embed.weight)
        return torch.tanh(logits / LOGITS_SOFT_CAP) * LOGITS_SOFT_CAP


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_griffin torch: unknown PADIFF_BUG {bug!r}")
    _CFG["exact_gelu"] = bug == "torch_exact_gelu"
    _CFG["scan_diag"] = -1 if bug == "torch_scan_drops_current" else 0
    torch.manual_seed(0)
    m = GriffinForCausalLM()
    return m.eval()


def _ids():
    rng = np.random.default_rng(97)
    return rng.integers(0, VOCAB_SIZE, size=(BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 12, 50]
    return (output**2).mean()
