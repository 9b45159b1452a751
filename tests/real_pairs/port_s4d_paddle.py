"""Hand-written port, paddle side: a tiny S4D (diagonal state-space) sequence model (written by "person A").

Input (positional): `x` [2, 32, 3] float32 (batch, length, features; numpy rng seed 13,
standard normal). Output: per-step predictions [2, 32, 4].

Model: encoder Linear(3, 8) -> 2 x [S4D block, residual, LayerNorm (post-norm)] -> decoder
Linear(8, 4) applied at every step.

One S4D block on H = 8 channels, each with N/2 = 4 complex diagonal modes:
  dt = exp(log_dt)                      [H]
  A  = -exp(log_A_real) + i A_imag      [H, 4]
  C' = C * B * (exp(dt A) - 1) / A      (zero-order hold)
  K[h, l] = 2 Re( sum_n C'[h, n] exp(dt A[h, n] l) ),  l = 0..L-1   (Vandermonde)
  y = causal_conv(u, K) + D * u ;  y = GELU(y) ;  y = output_linear(y)
Residual and norm in the model: x = LayerNorm(x + block(x)).

Paddle idioms on this side (S4 reference code style, CHANNEL-FIRST [B, H, L] inside the stack):
- root `S4DModel`: `encoder` nn.Linear(3, 8), `s4_layers` (LayerList of `S4DBlock`), `norms`
  (a SEPARATE LayerList of nn.LayerNorm(8)), `decoder` nn.Linear(8, 4). The residual add is
  inline in the root forward; the norm is applied after transposing to [B, L, H] and back.
- `S4DBlock`: `kernel` (an `S4DKernel`, called with L), `D` [H] (create_parameter),
  `output_linear` = nn.Conv1D(8, 8, 1) (a 1x1 conv on [B, H, L]). The causal convolution is an
  FFT convolution, inline: rfft of u and K with n = 2L, product, irfft, first L samples. GELU is
  F.gelu inline.
- `S4DKernel` stores the complex parameters as REAL PAIRS in the last axis: `B` [H, 4, 2],
  `C` [H, 4, 2] (re, im), next to `log_dt` [H], `log_A_real` [H, 4], `A_imag` [H, 4]; all complex
  arithmetic is written out by hand in real numbers (exp / cos / sin), no complex dtype.
- model() gives every parameter trained-looking seeded values (rng 23): S4D-Lin-like A with
  noise, B = 1 + noise, C ~ N(0, 0.5), log_dt in [log 0.01, log 0.2], D ~ N(0, 1), LayerNorm
  weights U(0.7, 1.3) / biases N(0, 0.1), Linear / Conv biases N(0, 0.1).

The torch side (port_s4d_torch.py) was written independently: channel-last [B, L, H], torch complex
tensors built from separate real / imaginary parameters, a DIRECT causal convolution (F.conv1d with
the flipped kernel), the norm inside a residual block module.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_gelu_tanh         -> the block's F.gelu is called with approximate=True (tanh form)
  paddle_vandermonde_conj  -> the hand-written Vandermonde uses exp(re) * (cos - i sin), i.e. the
                              conjugate powers, in S4DKernel
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

D_INPUT, D_MODEL, N_HALF, N_LAYERS, D_OUTPUT = 3, 8, 4, 2, 4
BATCH, SEQ_LEN = 2, 32
OWN_BUGS = {"paddle_gelu_tanh", "paddle_vandermonde_conj"}
OTHER_BUGS = {"torch_conv_not_flipped", "torch_kernel_drops_B"}


class S4DKernel(nn.Layer):
    def __init__(self, h, n_half, conj=False):
        super().__init__()
        self.conj = conj
        zeros = nn.initializer.Constant(0.0)
        self.log_dt = self.create_parameter([h], default_initializer=zeros)
        self.log_A_real = self.create_parameter([h, n_half], default_initializer=zeros)
        self.A_imag = self.create_parameter([h, n_half], default_initializer=zeros)
        self.B = self.create_parameter([h, n_half, 2], default_initializer=zeros)
        self.C = self.create_parameter([h, n_half, 2], default_initializer=zeros)

    def forward(self, seq_len):
        dt = paddle.exp(self.log_dt).unsqueeze(-1)  # [H, 1]
        a_re = -paddle.exp(self.log_A_real)
        a_im = self.A_imag
        dta_re, dta_im = a_re * dt, a_im * dt
        # C * B
        b_re, b_im = self.B[..., 0], self.B[..., 1]
        c_re, c_im = self.C[..., 0], self.C[..., 1]
        cb_re = c_re * b_re - c_im * b_im
        cb_im = c_re * b_im + c_im * b_re
        # (exp(dt A) - 1) / A
        e = paddle.exp(dta_re)
        num_re, num_im = e * paddle.cos(dta_im) - 1.0, e * paddle.sin(dta_im)
        den = a_re * a_re + a_im * a_im
        q_re = (num_re * a_re + num_im * a_im) / den
        q_im = (num_im * a_re - num_re * a_im) / den
        cz_re = cb_re * q_re - cb_im * q_im
        cz_im = cb_re * q_im + cb_im * q_re
        # Vandermonde: exp(dt A * l)
        pos = paddle.arange(seq_len, dtype="float32")
        mag = paddle.exp(dta_re.unsqueeze(-1) * pos)
        ang = dta_im.unsqueeze(-1) * pos
        v_re = mag * paddle.cos(ang)
        v_im = -mag * paddle.sin(ang) if self.conj else mag * paddle.sin(ang)
        k = cz_re.unsqueeze(-1) * v_re - cz_im.unsqueeze(-1) * v_im  # [H, N/2, L]
        return 2.0 * k.sum(axis=1)  # [H, L]


class S4DBlock(nn.Layer):
    def __init__(self, h, n_half, conj=False, gelu_tanh=False):
        super().__init__()
        self.gelu_tanh = gelu_tanh
        self.kernel = S4DKernel(h, n_half, conj=conj)
        self.D = self.create_parameter([h], default_initializer=nn.initializer.Constant(1.0))
        self.output_linear = nn.Conv1D(h, h, 1, data_format="NCL")

    def forward(self, u):  # [B, H, L]
        seq_len = u.shape[-1]
        k = self.kernel(seq_len)
        k_f = paddle.fft.rfft(k, n=2 * seq_len)
        u_f = paddle.fft.rfft(u, n=2 * seq_len)
        y = paddle.fft.irfft(u_f * k_f, n=2 * seq_len)[..., :seq_len]
        y = y + u * self.D.unsqueeze(-1)
        y = F.gelu(y, approximate=self.gelu_tanh)
        return self.output_linear(y)


class S4DModel(nn.Layer):
    def __init__(self, conj=False, gelu_tanh=False):
        super().__init__()
        self.encoder = nn.Linear(D_INPUT, D_MODEL)
        self.s4_layers = nn.LayerList([S4DBlock(D_MODEL, N_HALF, conj, gelu_tanh) for _ in range(N_LAYERS)])
        self.norms = nn.LayerList([nn.LayerNorm(D_MODEL) for _ in range(N_LAYERS)])
        self.decoder = nn.Linear(D_MODEL, D_OUTPUT)

    def forward(self, x):  # [B, L, d_input]
        x = self.encoder(x).transpose([0, 2, 1])  # [B, H, L]
        for layer, norm in zip(self.s4_layers, self.norms):
            z = layer(x)
            x = z + x
            x = norm(x.transpose([0, 2, 1])).transpose([0, 2, 1])
        return self.decoder(x.transpose([0, 2, 1]))  # [B, L, d_output]


def _trained_look(m):
    rng = np.random.default_rng(23)
    h, n = D_MODEL, N_HALF
    for blk in m.s4_layers:
        kn = blk.kernel
        kn.log_dt.set_value(rng.uniform(math.log(0.01), math.log(0.2), h).astype("float32"))
        kn.log_A_real.set_value((math.log(0.5) + rng.normal(0.0, 0.3, (h, n))).astype("float32"))
        kn.A_imag.set_value((math.pi * np.arange(n)[None, :] + rng.normal(0.0, 0.2, (h, n))).astype("float32"))
        b = np.stack([1.0 + rng.normal(0.0, 0.2, (h, n)), rng.normal(0.0, 0.2, (h, n))], axis=-1)
        kn.B.set_value(b.astype("float32"))
        kn.C.set_value(rng.normal(0.0, 0.5, (h, n, 2)).astype("float32"))
        blk.D.set_value(rng.normal(0.0, 1.0, h).astype("float32"))
    for norm in m.norms:
        norm.weight.set_value(rng.uniform(0.7, 1.3, D_MODEL).astype("float32"))
        norm.bias.set_value(rng.normal(0.0, 0.1, D_MODEL).astype("float32"))
    for layer in m.sublayers():
        if isinstance(layer, (nn.Linear, nn.Conv1D)):
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_s4d paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = S4DModel(conj=bug == "paddle_vandermonde_conj", gelu_tanh=bug == "paddle_gelu_tanh")
    _trained_look(m)
    m.eval()
    return m


def _x():
    return np.random.default_rng(13).standard_normal((BATCH, SEQ_LEN, D_INPUT)).astype("float32")


def inputs():
    return (paddle.to_tensor(_x()),), {}


def loss(output):
    # per-step predictions [2, 32, 4]
    return (output**2).mean()
