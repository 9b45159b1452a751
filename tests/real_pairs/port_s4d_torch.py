"""Hand-written port, torch side: a tiny S4D (diagonal state-space) sequence model (written by "person B").

The same math as port_s4d_paddle.py, re-implemented by hand: input `x` [2, 32, 3] (positional,
numpy rng seed 13), embed Linear(3, 8), two residual blocks norm(x + S4D mixer(x)), a per-step
head Linear(8, 4): output [2, 32, 4].

Torch idioms on this side (CHANNEL-LAST [B, L, H] between modules, Mamba-like block / mixer split):
- root `S4DSequenceModel`: `embed` nn.Linear(3, 8), `blocks` nn.ModuleList of `ResidualBlock`,
  `head` nn.Linear(8, 4).
- `ResidualBlock`: `mixer` (an `S4DMixer`) and `norm` nn.LayerNorm(8); forward
  norm(x + mixer(x)) on [B, L, H].
- `S4DMixer` registers `kernel` (an `SSMKernelDiag`, called with L), `D` [H], `activation`
  nn.GELU(), `out_proj` nn.Linear(8, 8). The causal convolution is a DIRECT convolution: u is
  transposed to [B, H, L], left-padded with L - 1 zeros and F.conv1d'ed (groups = H) with the
  time-flipped kernel, y[t] = sum_j K[j] u[t - j]; then + D u, back to [B, L, H], GELU, out_proj.
- `SSMKernelDiag` keeps SEPARATE real and imaginary parameters, registered as `log_dt`,
  `C_real`, `C_imag`, `B_real`, `B_imag`, `log_A_real`, `A_imag`, and computes the kernel with
  torch complex64 tensors: dtA = (-exp(log_A_real) + i A_imag) * dt,
  C' = (C_real + i C_imag) (B_real + i B_imag) (exp(dtA) - 1) / A,
  K = 2 Re(einsum("hn,hnl->hl", C', exp(dtA[..., None] * arange(L)))).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_conv_not_flipped -> F.conv1d is given K itself, not K.flip(-1) (conv1d is a
                            cross-correlation), so y[t] = sum_j K[L-1-j] u[t - j]
  torch_kernel_drops_B   -> SSMKernelDiag uses C alone (the reference S4D folds B into C), so
                            the trained B is ignored
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

D_IN, D_MODEL, D_STATE_HALF, N_BLOCKS, D_OUT = 3, 8, 4, 2, 4
BATCH, SEQ_LEN = 2, 32
OWN_BUGS = {"torch_conv_not_flipped", "torch_kernel_drops_B"}
OTHER_BUGS = {"paddle_gelu_tanh", "paddle_vandermonde_conj"}


class SSMKernelDiag(nn.Module):
    def __init__(self, d_model, n_half, drop_b=False):
        super().__init__()
        self.drop_b = drop_b
        self.log_dt = nn.Parameter(torch.zeros(d_model))
        self.C_real = nn.Parameter(torch.randn(d_model, n_half) * 0.5)
        self.C_imag = nn.Parameter(torch.randn(d_model, n_half) * 0.5)
        self.B_real = nn.Parameter(torch.ones(d_model, n_half))
        self.B_imag = nn.Parameter(torch.zeros(d_model, n_half))
        self.log_A_real = nn.Parameter(torch.full((d_model, n_half), -0.6931))
        self.A_imag = nn.Parameter(torch.pi * torch.arange(n_half, dtype=torch.float32).repeat(d_model, 1))

    def forward(self, L):
        dt = torch.exp(self.log_dt)  # [H]
        A = torch.complex(-torch.exp(self.log_A_real), self.A_imag)  # [H, N/2]
        dtA = A * dt.unsqueeze(-1)
        C = torch.complex(self.C_real, self.C_imag)
        if not self.drop_b:
            C = C * torch.complex(self.B_real, self.B_imag)
        C = C * (torch.exp(dtA) - 1.0) / A
        vander = torch.exp(dtA.unsqueeze(-1) * torch.arange(L, device=dtA.device))  # [H, N/2, L]
        return 2.0 * torch.einsum("hn,hnl->hl", C, vander).real


class S4DMixer(nn.Module):
    def __init__(self, d_model, n_half, drop_b=False, no_flip=False):
        super().__init__()
        self.no_flip = no_flip
        self.kernel = SSMKernelDiag(d_model, n_half, drop_b=drop_b)
        self.D = nn.Parameter(torch.randn(d_model))
        self.activation = nn.GELU()
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, x):  # [B, L, H]
        L = x.shape[1]
        k = self.kernel(L)  # [H, L]
        u = x.transpose(1, 2)  # [B, H, L]
        weight = k if self.no_flip else k.flip(-1)
        y = F.conv1d(F.pad(u, (L - 1, 0)), weight.unsqueeze(1), groups=u.shape[1])
        y = y + u * self.D.unsqueeze(-1)
        y = self.activation(y.transpose(1, 2))
        return self.out_proj(y)


class ResidualBlock(nn.Module):
    def __init__(self, d_model, n_half, **kw):
        super().__init__()
        self.mixer = S4DMixer(d_model, n_half, **kw)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x):
        return self.norm(x + self.mixer(x))


class S4DSequenceModel(nn.Module):
    def __init__(self, drop_b=False, no_flip=False):
        super().__init__()
        self.embed = nn.Linear(D_IN, D_MODEL)
        self.blocks = nn.ModuleList(
            [ResidualBlock(D_MODEL, D_STATE_HALF, drop_b=drop_b, no_flip=no_flip) for _ in range(N_BLOCKS)])
        self.head = nn.Linear(D_MODEL, D_OUT)

    def forward(self, x):
        x = self.embed(x)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_s4d torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = S4DSequenceModel(drop_b=bug == "torch_kernel_drops_B", no_flip=bug == "torch_conv_not_flipped")
    return m.eval()


def _x():
    return np.random.default_rng(13).standard_normal((BATCH, SEQ_LEN, D_IN)).astype("float32")


def inputs():
    return (torch.from_numpy(_x()),), {}


def loss(output):
    # per-step predictions [2, 32, 4]
    return (output**2).mean()
