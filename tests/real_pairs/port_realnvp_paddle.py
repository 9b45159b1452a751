"""Hand-written port, paddle side: a tiny RealNVP normalizing flow on 8-dim vectors (written by "person A").

Four affine coupling layers on x [4, 8] (numpy seed 21, a correlated Gaussian), each with a
binary mask m: the masked dims pass through, the others are scaled and shifted,

    y = x * m + (1 - m) * (x * exp(s) + t),   s = s_scale * tanh(s_raw),   log_det += sum((1-m) * s)

where s_raw and t come from an MLP of the masked input x * m. The masks alternate between the
first half [1,1,1,1,0,0,0,0] and the second half [0,0,0,0,1,1,1,1]. Returns (z [4, 8],
log_det [4]); `loss` is the Gaussian negative log-likelihood mean(0.5 * |z|^2 - log_det).

Paddle idioms on this side (the classic "masked RealNVP" way):
- root `RealNVP`: `couplings` = LayerList of `CouplingLayer`; the mask pattern is a tuple (0, 1,
  0, 1) picking the first-half mask or its complement.
- `CouplingLayer`: the mask is a registered BUFFER `mask` [8] (register_buffer, float32);
  the MLP works on the full 8-dim masked input: `fc1` Linear(8, 32), `fc2` Linear(32, 32), one
  shared `act` nn.LeakyReLU(0.2) called twice, then TWO heads `s_head`, `t_head` Linear(32, 8);
  `s_scale` [8] (create_parameter, Uniform(0.5, 1.5)) bounds the log-scale with tanh. The heads'
  outputs for the masked (pass-through) dims, and fc1's rows for the non-masked dims, are
  multiplied by 0 and have no effect.

The torch side (port_realnvp_torch.py) was written independently: no masks, the vector is split
into halves by index slicing and FLIPPED after every coupling, one packed Sequential net per
coupling with 4 inputs and 8 outputs (s | t for the 4 transformed dims).

Planted bugs (PADIFF_BUG); the torch side's bug names are accepted and ignored, any other name
raises ValueError:
  paddle_mask_not_alternated -> the mask pattern is typed (0, 1, 0, 0): the last coupling uses
                                the same mask as the third one (it re-transforms dims 4..7
                                and leaves dims 0..3 untouched)
  paddle_leaky_default_slope -> `act` built as nn.LeakyReLU() (paddle's default slope 0.01)
                                instead of nn.LeakyReLU(0.2), in every coupling
"""
import os

import numpy as np
import paddle
from paddle import nn

DIM, HIDDEN, N_COUPLINGS = 8, 32, 4
BATCH = 4
MASK_PATTERN = (0, 1, 0, 1)
OWN_BUGS = {"paddle_mask_not_alternated", "paddle_leaky_default_slope"}
OTHER_BUGS = {"torch_exp_neg_s"}


class CouplingLayer(nn.Layer):
    def __init__(self, mask, slope=0.2):
        super().__init__()
        self.register_buffer("mask", paddle.to_tensor(mask, dtype="float32"))
        self.fc1 = nn.Linear(DIM, HIDDEN)
        self.fc2 = nn.Linear(HIDDEN, HIDDEN)
        self.act = nn.LeakyReLU(slope) if slope is not None else nn.LeakyReLU()
        self.s_head = nn.Linear(HIDDEN, DIM)
        self.t_head = nn.Linear(HIDDEN, DIM)
        self.s_scale = self.create_parameter([DIM], default_initializer=nn.initializer.Uniform(0.5, 1.5))

    def forward(self, x):
        x_masked = x * self.mask
        h = self.act(self.fc2(self.act(self.fc1(x_masked))))
        inv = 1.0 - self.mask
        s = self.s_scale * paddle.tanh(self.s_head(h)) * inv
        t = self.t_head(h) * inv
        y = x_masked + inv * (x * paddle.exp(s) + t)
        return y, s.sum(axis=-1)


class RealNVP(nn.Layer):
    def __init__(self, pattern=MASK_PATTERN, slope=0.2):
        super().__init__()
        first_half = np.array([1.0] * (DIM // 2) + [0.0] * (DIM // 2), dtype="float32")
        masks = [first_half if p == 0 else 1.0 - first_half for p in pattern]
        self.couplings = nn.LayerList([CouplingLayer(m, slope) for m in masks])

    def forward(self, x):
        log_det = paddle.zeros([x.shape[0]], dtype=x.dtype)
        for layer in self.couplings:
            x, ld = layer(x)
            log_det = log_det + ld
        return x, log_det


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_realnvp paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = RealNVP(
        pattern=(0, 1, 0, 0) if bug == "paddle_mask_not_alternated" else MASK_PATTERN,
        slope=None if bug == "paddle_leaky_default_slope" else 0.2,
    )
    m.eval()
    return m


def _data():
    rng = np.random.default_rng(21)
    a = rng.standard_normal((DIM, DIM)) * 0.5 + np.eye(DIM)
    return (rng.standard_normal((BATCH, DIM)) @ a).astype("float32")


def inputs():
    return (paddle.to_tensor(_data()),), {}


def loss(output):
    z, log_det = output
    return (0.5 * (z**2).sum(axis=-1) - log_det).mean()
