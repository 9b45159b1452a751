"""Hand-written port, torch side: a tiny Mamba-style selective state-space LM (written by "person B").

The same math as port_mamba_paddle.py, re-implemented by hand. Sizes: vocab 64, d_model 32,
d_inner 64, d_state 8, d_conv 4, dt_rank 2, 2 layers, sequence length 8, batch 2, RMSNorm eps
1e-5. The LM head is TIED: `head` is an nn.Linear(32, 64, bias=False) whose weight IS
`tok_emb.weight` (named_parameters lists it once, as tok_emb.weight).

Torch idioms on this side:
- root `Mamba`: `tok_emb`, `blocks` = ModuleList of `MambaBlock`, `ln_f` (torch's nn.RMSNorm),
  `head` (tied).
- `MambaBlock` registers `ln` (nn.RMSNorm) then `mix`: x + mix(ln(x)).
- `MixerSSM`: `A_log` [64, 8] and `D` [64] registered FIRST (raw nn.Parameters), then ONE packed
  `in_proj` Linear(32, 128, no bias) whose output is chunked into x | z (rows 0:64 x, 64:128 z);
  `conv` = nn.Conv1d(64, 64, 4, groups=64, padding=3) whose output (length L + 3) is TRIMMED to
  the first L steps (the reference Mamba idiom); `act` = nn.SiLU module (silu(z) for the gate is
  F.silu inline); `x_proj` Linear(64, 18, no bias) split into (dt, B, C); `dt_proj` Linear(2, 64)
  + F.softplus; A = -exp(A_log). The selective scan is the closed (quadratic, segment-sum) form:
  S = cumsum(dt * A) over time, h_t = sum_{s <= t} exp(S_t - S_s) * dt_s * B_s * u_s (the exponent
  masked to -inf above the diagonal), y_t = <h_t, C_t>, computed with two einsums; no loop.
  Then + D * u, * silu(z), `out_proj` Linear(64, 32, no bias).

Planted bugs (PADIFF_BUG), see port_mamba_truth.json; the paddle side's bug names are accepted
and ignored, any other name raises ValueError:
  conv_trim_off_by_one -> the padded conv output is trimmed as [..., 1:L + 1] instead of
                          [..., :L] (each step sees one future token, the conv is not causal)
  rmsnorm_default_eps  -> every nn.RMSNorm built without eps=, i.e. torch's default
                          eps = finfo(float32).eps = 1.19e-7 instead of 1e-5 (precision-level)
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB, D_MODEL, D_INNER, D_STATE, D_CONV, LAYERS = 64, 32, 64, 8, 4, 2
DT_RANK = math.ceil(D_MODEL / 16)
EPS = 1e-5
BATCH, SEQ = 2, 8
OWN_BUGS = {"conv_trim_off_by_one", "rmsnorm_default_eps"}
OTHER_BUGS = {"paddle_A_positive"}


def ssm_closed_form(u, dt, A, B, C):
    """u, dt [b, l, d]; A [d, n]; B, C [b, l, n] -> y [b, l, d] without the D skip."""
    l = u.shape[1]  # noqa: E741 (the paper's names)
    log_decay = torch.cumsum(dt.unsqueeze(-1) * A, dim=1)  # S_t [b, l, d, n]
    seg = log_decay.unsqueeze(2) - log_decay.unsqueeze(1)  # [b, t, s, d, n] = S_t - S_s
    causal = torch.tril(torch.ones(l, l, dtype=torch.bool, device=u.device))
    seg = seg.masked_fill(~causal[None, :, :, None, None], float("-inf"))
    dbu = (dt * u).unsqueeze(-1) * B.unsqueeze(2)  # [b, s, d, n]
    h = torch.einsum("btsdn,bsdn->btdn", torch.exp(seg), dbu)
    return torch.einsum("btdn,btn->btd", h, C)


class MixerSSM(nn.Module):
    def __init__(self, trim_off_by_one=False):
        super().__init__()
        self.trim_off_by_one = trim_off_by_one
        self.A_log = nn.Parameter(torch.log(torch.arange(1, D_STATE + 1, dtype=torch.float32)).repeat(D_INNER, 1))
        self.D = nn.Parameter(torch.ones(D_INNER))
        self.in_proj = nn.Linear(D_MODEL, 2 * D_INNER, bias=False)
        self.conv = nn.Conv1d(D_INNER, D_INNER, D_CONV, groups=D_INNER, padding=D_CONV - 1)
        self.act = nn.SiLU()
        self.x_proj = nn.Linear(D_INNER, DT_RANK + 2 * D_STATE, bias=False)
        self.dt_proj = nn.Linear(DT_RANK, D_INNER)
        self.out_proj = nn.Linear(D_INNER, D_MODEL, bias=False)

    def forward(self, h):
        seqlen = h.shape[1]
        x, z = self.in_proj(h).chunk(2, dim=-1)
        x = self.conv(x.transpose(1, 2))
        x = x[..., 1:seqlen + 1] if self.trim_off_by_one else x[..., :seqlen]
        x = self.act(x.transpose(1, 2))
        dt, B, C = torch.split(self.x_proj(x), [DT_RANK, D_STATE, D_STATE], dim=-1)
        dt = F.softplus(self.dt_proj(dt))
        A = -torch.exp(self.A_log)
        y = ssm_closed_form(x, dt, A, B, C) + x * self.D
        y = y * F.silu(z)
        return self.out_proj(y)


class MambaBlock(nn.Module):
    def __init__(self, norm_eps, trim_off_by_one=False):
        super().__init__()
        self.ln = nn.RMSNorm(D_MODEL, eps=norm_eps)
        self.mix = MixerSSM(trim_off_by_one)

    def forward(self, x):
        return x + self.mix(self.ln(x))


class Mamba(nn.Module):
    def __init__(self, trim_off_by_one=False, default_eps=False):
        super().__init__()
        eps = None if default_eps else EPS  # None -> torch.finfo(x.dtype).eps
        self.tok_emb = nn.Embedding(VOCAB, D_MODEL)
        self.blocks = nn.ModuleList([MambaBlock(eps, trim_off_by_one) for _ in range(LAYERS)])
        self.ln_f = nn.RMSNorm(D_MODEL, eps=eps)
        self.head = nn.Linear(D_MODEL, VOCAB, bias=False)
        self.head.weight = self.tok_emb.weight  # tied

    def forward(self, input_ids):
        x = self.tok_emb(input_ids)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_mamba torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = Mamba(trim_off_by_one=bug == "conv_trim_off_by_one", default_eps=bug == "rmsnorm_default_eps")
    return m.eval()


def _ids():
    rng = np.random.default_rng(7)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 8, 64]
    return (output**2).mean()
