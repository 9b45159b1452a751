"""port_nerf transform: the two sides order the sinusoidal encoding differently.

paddle (nerf-pytorch Embedder), PER FREQUENCY: [x, sin(f0 x), cos(f0 x), sin(f1 x), cos(f1 x), ...]
  feature index of x_d = d; of sin(f_l x_d) = 3 + 6 l + d; of cos(f_l x_d) = 3 + 6 l + 3 + d.
torch (PositionalEncoding), blocks: [x, sin(scaled), cos(scaled)] with scaled = x[..., None] * f
  flattened DIM-MAJOR: torch index 3 + d L + l is sin(f_l x_d), 3 + 3 L + d L + l is cos(f_l x_d).
So every Linear that reads an encoding has its input features permuted: torch weight column
A + j = paddle weight row A + perm[j] (paddle weights are [in, out]).

Transform: "encoding permute: paddle transposed, per-frequency -> [x, sin, cos] dim-major, L bands of 3 dims, at input features A:B"
  out = paddle.T; out[:, A:B] = paddle.T[:, A + perm]  (the other input features stay in place)
"""
import re

import numpy as np

_ENC = re.compile(r"^encoding permute: paddle transposed, per-frequency -> \[x, sin, cos\] dim-major, "
                  r"(\d+) bands of 3 dims, at input features (\d+):(\d+)$")


def encoding_perm(num_freqs, dims=3):
    """perm[j] = paddle feature index of torch feature j (both relative to the encoding start)."""
    perm = list(range(dims))
    for block in (0, 1):  # sin, cos
        for d in range(dims):
            for k in range(num_freqs):
                perm.append(dims + 2 * dims * k + block * dims + d)
    return np.array(perm)


def convert(transform, paddle_array, torch_array):
    m = _ENC.match(transform)
    if m is None:
        return None
    num_freqs, a, b = (int(g) for g in m.groups())
    perm = encoding_perm(num_freqs)
    if len(perm) != b - a:
        raise ValueError(f"port_nerf hook: {transform!r}: {len(perm)} encoded features, range {a}:{b}")
    w = paddle_array.T.copy()  # [out, in]
    w[:, a:b] = paddle_array.T[:, a + perm]
    return np.ascontiguousarray(w)
