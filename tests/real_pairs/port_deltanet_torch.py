"""Hand-written port, torch side: a tiny DeltaNet linear-attention language model (written by "person B").

The same math as port_deltanet_paddle.py, re-implemented by hand: vocab 64, width 32, 2 heads of
16, SwiGLU hidden 64, 2 layers, conv kernel 4, positional `input_ids` [2, 12] int64 (numpy rng
seed 23), logits [2, 12, 64].

Delta rule, chunked form (the "UT / WY transform" of the fla naive chunk kernel), chunk size 4,
state kept as S [dk, dv] (the transpose of the per-step [dv, dk] form):
  inside a chunk, with K_b = diag(beta) K, V_b = diag(beta) V, A = strict_lower(K_b K^T):
      W = (I + A)^-1 K_b,  U = (I + A)^-1 V_b            (unit-triangular solves)
  per chunk, in order:  U' = U - W S;  O = Q S + tril(Q K^T) U';  S <- S + K^T U'
which gives exactly o_t = S_t^T q_t of the step-by-step recurrence
S_t = S_{t-1} + beta_t k_t (v_t - S_{t-1}^T k_t)^T.

Torch idioms on this side:
- root `DeltaNetForCausalLM`: `tok_emb` nn.Embedding(64, 32), `blocks` = ModuleList of `Block`,
  `norm_f` (torch nn.RMSNorm, eps 1e-6), `head` Linear(32, 64, no bias).
- `Block` registers `norm1`, `norm2` (nn.RMSNorm, eps 1e-6) BEFORE `mixer` and `ffn`.
- `DeltaNetMixer`:
  - ONE packed `in_proj` Linear(32, 98, no bias) whose output is [q (32) | k (32) | v (32) |
    beta logits (2)];
  - ONE packed depthwise `conv1d` nn.Conv1d(96, 96, 4, groups=96, padding=3, no bias) over the
    q|k|v channels (channels-first), trimmed to the first L steps and passed through F.silu
    inline in the mixer forward;
  - F.normalize(dim=-1, eps=1e-6) for the q / k L2 norm and sigmoid for beta, inline;
  - `delta_rule` = ChunkedDeltaRule (no parameters; it also applies the 1/sqrt(16) q scale),
    called with [B, H, L, 16] tensors;
  - `g_proj` Linear(32, 32), `o_norm` RMSNormGated(16, eps 1e-5, norm_before_gate=True),
    `o_proj` Linear(32, 32), all without bias.
- `RMSNormGated` is mamba_ssm-shaped: forward(x, z), with a `norm_before_gate` switch whose class
  default is False (gate first), so the mixer passes norm_before_gate=True.
- `SwiGLU` ffn: ONE fused `fc_in` Linear(32, 128) chunked into gate | up, F.silu, `fc_out`.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_wy_diag_masked   -> ChunkedDeltaRule builds the intra-chunk causal mask with
                            triu(diagonal=0) instead of triu(diagonal=1): the diagonal q_t . k_t
                            term is masked out, so o_t misses the current token's own update
  torch_gate_before_norm -> the mixer builds o_norm with the class default
                            (norm_before_gate=False): RMSNorm(o * silu(g)) instead of
                            RMSNorm(o) * silu(g)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

VOCAB, HIDDEN, HEADS, DK, INTERMEDIATE, LAYERS, KERNEL = 64, 32, 2, 16, 64, 2, 4
CHUNK = 4
BATCH, SEQ = 2, 12
OWN_BUGS = {"torch_wy_diag_masked", "torch_gate_before_norm"}
OTHER_BUGS = {"paddle_conv_pad_right", "paddle_beta_fp16"}


class RMSNormGated(nn.Module):
    def __init__(self, d, eps=1e-5, norm_before_gate=False):
        super().__init__()
        self.eps = eps
        self.norm_before_gate = norm_before_gate
        self.weight = nn.Parameter(torch.ones(d))

    def _rms(self, x):
        return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)

    def forward(self, x, z):
        if self.norm_before_gate:
            return self._rms(x) * self.weight * F.silu(z)
        return self._rms(x * F.silu(z)) * self.weight


class ChunkedDeltaRule(nn.Module):
    def __init__(self, chunk_size, head_dim, diag_masked=False):
        super().__init__()
        self.chunk_size = chunk_size
        self.scale = head_dim**-0.5
        self.diag_masked = diag_masked

    def forward(self, q, k, v, beta):
        # q, k, v: [B, H, L, D]; beta: [B, H, L]
        bsz, nh, seqlen, d = q.shape
        c = self.chunk_size
        n = seqlen // c
        q = q * self.scale
        k_beta = k * beta.unsqueeze(-1)
        v_beta = v * beta.unsqueeze(-1)
        q, k, k_beta, v_beta = (t.reshape(bsz, nh, n, c, d) for t in (q, k, k_beta, v_beta))
        a = torch.tril(k_beta @ k.transpose(-1, -2), diagonal=-1)
        t_mat = a + torch.eye(c, dtype=q.dtype)
        w = torch.linalg.solve_triangular(t_mat, k_beta, upper=False, unitriangular=True)
        u = torch.linalg.solve_triangular(t_mat, v_beta, upper=False, unitriangular=True)
        mask = torch.ones(c, c, dtype=torch.bool).triu(diagonal=0 if self.diag_masked else 1)
        s = q.new_zeros(bsz, nh, d, d)  # [dk, dv]
        out = []
        for i in range(n):
            q_i, k_i = q[:, :, i], k[:, :, i]
            u_i = u[:, :, i] - w[:, :, i] @ s
            attn = (q_i @ k_i.transpose(-1, -2)).masked_fill(mask, 0.0)
            out.append(q_i @ s + attn @ u_i)
            s = s + k_i.transpose(-1, -2) @ u_i
        return torch.cat(out, dim=2)  # [B, H, L, D]


class DeltaNetMixer(nn.Module):
    def __init__(self, diag_masked=False, gate_before_norm=False):
        super().__init__()
        inner = HEADS * DK
        self.in_proj = nn.Linear(HIDDEN, 3 * inner + HEADS, bias=False)
        self.conv1d = nn.Conv1d(3 * inner, 3 * inner, KERNEL, groups=3 * inner, padding=KERNEL - 1, bias=False)
        self.g_proj = nn.Linear(HIDDEN, inner, bias=False)
        self.delta_rule = ChunkedDeltaRule(CHUNK, DK, diag_masked)
        if gate_before_norm:
            self.o_norm = RMSNormGated(DK, eps=1e-5)
        else:
            self.o_norm = RMSNormGated(DK, eps=1e-5, norm_before_gate=True)
        self.o_proj = nn.Linear(inner, HIDDEN, bias=False)

    def forward(self, x):
        bsz, seqlen, _ = x.shape
        inner = HEADS * DK
        qkv, b = self.in_proj(x).split([3 * inner, HEADS], dim=-1)
        qkv = F.silu(self.conv1d(qkv.transpose(1, 2))[..., :seqlen]).transpose(1, 2)
        q, k, v = (t.reshape(bsz, seqlen, HEADS, DK).transpose(1, 2) for t in qkv.chunk(3, dim=-1))
        q = F.normalize(q, p=2, dim=-1, eps=1e-6)
        k = F.normalize(k, p=2, dim=-1, eps=1e-6)
        beta = b.sigmoid().transpose(1, 2)  # [B, H, L]
        o = self.delta_rule(q, k, v, beta).transpose(1, 2)  # [B, L, H, D]
        g = self.g_proj(x).view(bsz, seqlen, HEADS, DK)
        o = self.o_norm(o, g)
        return self.o_proj(o.reshape(bsz, seqlen, inner))


class SwiGLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc_in = nn.Linear(HIDDEN, 2 * INTERMEDIATE, bias=False)
        self.fc_out = nn.Linear(INTERMEDIATE, HIDDEN, bias=False)

    def forward(self, x):
        gate, up = self.fc_in(x).chunk(2, dim=-1)
        return self.fc_out(F.silu(gate) * up)


class Block(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.norm1 = nn.RMSNorm(HIDDEN, eps=1e-6)
        self.norm2 = nn.RMSNorm(HIDDEN, eps=1e-6)
        self.mixer = DeltaNetMixer(**kw)
        self.ffn = SwiGLU()

    def forward(self, x):
        x = x + self.mixer(self.norm1(x))
        return x + self.ffn(self.norm2(x))


class DeltaNetForCausalLM(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.tok_emb = nn.Embedding(VOCAB, HIDDEN)
        self.blocks = nn.ModuleList([Block(**kw) for _ in range(LAYERS)])
        self.norm_f = nn.RMSNorm(HIDDEN, eps=1e-6)
        self.head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, input_ids):
        x = self.tok_emb(input_ids)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm_f(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_deltanet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = DeltaNetForCausalLM(diag_masked=bug == "torch_wy_diag_masked", gate_before_norm=bug == "torch_gate_before_norm")
    return m.eval()


def _ids():
    return np.random.default_rng(23).integers(0, VOCAB, size=(BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 12, 64]
    return (output**2).mean()
