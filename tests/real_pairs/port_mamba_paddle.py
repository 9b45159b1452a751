"""Hand-written port, paddle side: a tiny Mamba-style selective state-space LM (written by "person A").

Sizes: vocab 64, d_model 32, d_inner 64, d_state 8, d_conv 4, dt_rank 2, 2 layers, sequence
length 8, batch 2. RMSNorm eps 1e-5 (pre-norm residual blocks and a final norm). The LM head is
TIED to the token embedding: this side has no head module at all, the logits are
`matmul(h, embedding.weight, transpose_y=True)` inline in the root forward.

Paddle idioms on this side:
- root `MambaLM`: `embedding` (nn.Embedding 64x32, Normal(0, 0.1)), `layers` = LayerList of
  `ResidualBlock`, `norm_f` (RMSNorm).
- `ResidualBlock` registers `mixer` BEFORE `norm` (the norm is called first):
  x + mixer(norm(x)).
- `RMSNorm` is hand-written (create_parameter weight, x * rsqrt(mean(x^2) + eps) * w).
- `MambaMixer`: TWO input Linears `in_proj_x` and `in_proj_z` (32 -> 64 each, no bias) instead of
  one packed in_proj; the depthwise causal conv is nn.Conv1D(64, 64, 4, groups=64, padding 0)
  applied after LEFT-PADDING the sequence with F.pad([3, 0], data_format="NCL") (no trim);
  SiLU via F.silu inline (no module); `x_proj` Linear(64, 2 + 8 + 8, no bias) split into
  (dt, B, C); `dt_proj` Linear(2, 64) + F.softplus; `A_log` [64, 8] (A = -exp(A_log)) and `D`
  [64] created with create_parameter; the selective scan is a python loop over time
  (state = exp(dt * A) * state + dt * B * u; y_t = <state, C_t>), plus the D skip, gated by
  silu(z), then `out_proj` Linear(64, 32, no bias).

The torch side (port_mamba_torch.py) was written independently: a packed in_proj, padding=3 in
the conv then trimmed, an nn.SiLU module, nn.RMSNorm, a tied nn.Linear head and a quadratic
(segment-sum, closed-form) selective scan instead of the loop.

PADIFF_BUG=paddle_A_positive plants this side's bug: A = exp(A_log) instead of -exp(A_log) (the
minus sign of the S4D-real parameterisation dropped), so exp(dt * A) > 1 and the state grows
instead of decaying. The torch side's bug names are
accepted and ignored; any other name raises ValueError.
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, D_MODEL, D_INNER, D_STATE, D_CONV, LAYERS = 64, 32, 64, 8, 4, 2
DT_RANK = math.ceil(D_MODEL / 16)  # 2
EPS = 1e-5
BATCH, SEQ = 2, 8
OWN_BUGS = {"paddle_A_positive"}
OTHER_BUGS = {"conv_trim_off_by_one", "rmsnorm_default_eps"}


class RMSNorm(nn.Layer):
    def __init__(self, d_model, eps=EPS):
        super().__init__()
        self.eps = eps
        self.weight = self.create_parameter([d_model], default_initializer=nn.initializer.Normal(1.0, 0.1))

    def forward(self, x):
        return x * paddle.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class MambaMixer(nn.Layer):
    def __init__(self, a_positive=False):
        super().__init__()
        self.a_positive = a_positive
        self.in_proj_x = nn.Linear(D_MODEL, D_INNER, bias_attr=False)
        self.in_proj_z = nn.Linear(D_MODEL, D_INNER, bias_attr=False)
        self.conv1d = nn.Conv1D(D_INNER, D_INNER, D_CONV, groups=D_INNER)
        self.x_proj = nn.Linear(D_INNER, DT_RANK + 2 * D_STATE, bias_attr=False)
        self.dt_proj = nn.Linear(DT_RANK, D_INNER)
        # mamba's dt init: softplus(bias) log-uniform in [0.01, 0.2]
        rng = np.random.default_rng(11)
        dt = np.exp(rng.uniform(math.log(0.01), math.log(0.2), D_INNER))
        self.dt_proj.bias.set_value((dt + np.log(-np.expm1(-dt))).astype("float32"))
        a_log = np.log(np.tile(np.arange(1, D_STATE + 1, dtype="float32"), (D_INNER, 1)))
        a_log = a_log + rng.uniform(-0.1, 0.1, a_log.shape)
        self.A_log = self.create_parameter([D_INNER, D_STATE])
        self.A_log.set_value(a_log.astype("float32"))
        self.D = self.create_parameter([D_INNER], default_initializer=nn.initializer.Normal(1.0, 0.1))
        self.out_proj = nn.Linear(D_INNER, D_MODEL, bias_attr=False)

    @staticmethod
    def selective_scan(u, delta, A, Bm, Cm, D):
        """u, delta [b, l, d]; A [d, n]; Bm, Cm [b, l, n]; D [d] -> y [b, l, d] (a loop over time)."""
        b, l, d = u.shape  # noqa: E741 (the paper's names)
        n = A.shape[1]
        delta_a = paddle.exp(delta.unsqueeze(-1) * A)  # [b, l, d, n]
        delta_b_u = delta.unsqueeze(-1) * Bm.unsqueeze(2) * u.unsqueeze(-1)  # [b, l, d, n]
        state = paddle.zeros([b, d, n], dtype=u.dtype)
        ys = []
        for t in range(l):
            state = delta_a[:, t] * state + delta_b_u[:, t]
            ys.append((state * Cm[:, t].unsqueeze(1)).sum(-1))  # [b, d]
        y = paddle.stack(ys, axis=1)
        return y + u * D

    def forward(self, hidden):
        x = self.in_proj_x(hidden)  # [b, l, d_inner]
        z = self.in_proj_z(hidden)
        x = F.pad(x.transpose([0, 2, 1]), [D_CONV - 1, 0], data_format="NCL")  # causal: left pad
        x = self.conv1d(x).transpose([0, 2, 1])  # [b, l, d_inner]
        x = F.silu(x)
        dt, Bm, Cm = paddle.split(self.x_proj(x), [DT_RANK, D_STATE, D_STATE], axis=-1)
        dt = F.softplus(self.dt_proj(dt))
        A = paddle.exp(self.A_log) if self.a_positive else -paddle.exp(self.A_log)
        y = self.selective_scan(x, dt, A, Bm, Cm, self.D)
        y = y * F.silu(z)
        return self.out_proj(y)


class ResidualBlock(nn.Layer):
    def __init__(self, a_positive=False):
        super().__init__()
        self.mixer = MambaMixer(a_positive)
        self.norm = RMSNorm(D_MODEL)

    def forward(self, x):
        return x + self.mixer(self.norm(x))


class MambaLM(nn.Layer):
    def __init__(self, a_positive=False):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, D_MODEL, weight_attr=nn.initializer.Normal(0.0, 0.1))
        self.layers = nn.LayerList([ResidualBlock(a_positive) for _ in range(LAYERS)])
        self.norm_f = RMSNorm(D_MODEL)

    def forward(self, input_ids):
        x = self.embedding(input_ids)
        for layer in self.layers:
            x = layer(x)
        x = self.norm_f(x)
        return paddle.matmul(x, self.embedding.weight, transpose_y=True)  # tied head


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_mamba paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = MambaLM(a_positive=bug == "paddle_A_positive")
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(7)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 8, 64]
    return (output**2).mean()
