"""port_mistral_swa transform: the paddle side uses the rotate-half (HF) rotary convention, which
pairs dimension i of a head with dimension i + D/2; the torch side uses the mistral-src complex
(interleaved) convention, which pairs dimensions 2i and 2i + 1. So the torch `wq` / `wk` rows
are the paddle `q_proj` / `k_proj` output columns permuted within each head (the inverse of the
HF conversion script's `permute`). Paddle weights are [in, out], torch weights [out, in].

Transform: "paddle rotate-half columns to interleaved-pair rows, N heads of D, transposed"
  torch row h*D + 2i + a  <-  paddle column h*D + a*(D/2) + i   (a = 0, 1; i < D/2)
  torch_array = paddle_array[:, cols].T with cols listed in torch row order
"""
import re

import numpy as np

_PERM = re.compile(r"^paddle rotate-half columns to interleaved-pair rows, (\d+) heads of (\d+), transposed$")


def convert(transform, paddle_array, torch_array):
    m = _PERM.match(transform)
    if m is None:
        return None
    heads, dim = int(m.group(1)), int(m.group(2))
    half = dim // 2
    cols = np.array([h * dim + a * half + i for h in range(heads) for i in range(half) for a in range(2)])
    out = np.ascontiguousarray(paddle_array[:, cols].T)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_mistral_swa hook: {out.shape} != {torch_array.shape}")
    return out
