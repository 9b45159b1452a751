"""port_efficientvit transforms: the paddle side packs q / k / v in ONE 1x1 conv `qkv_conv`
(weight [48, 16, 1, 1]) whose output channels are laid out head by head, channel h*3*D + p*D + t
(p = 0 / 1 / 2 for q / k / v, D = 8, 2 heads), and its multi-scale aggregation convs
(depthwise [48, 1, K, K], grouped 1x1 [48, 8, 1, 1]) run on that head-interleaved layout. The
torch side has separate `q_lin` / `k_lin` / `v_lin` nn.Linear(16, 16) (weight [out, in], output
head-major: h*D + t) and runs the same aggregation convs on a PLANAR map [q | k | v], channel
p*H*D + h*D + t.

Transforms:
  "paddle head-interleaved qkv conv rows, X part, N heads of D" (X = q, k or v)
      rows = [h*3*D + idx*D + t for h in range(N) for t in range(D)]
      torch_array = paddle_array.reshape(3*N*D, -1)[rows]            ([out, in], no transpose)
  "paddle head-interleaved to planar qkv channels, N heads of D"
      torch channel p*N*D + h*D + t takes paddle channel h*3*D + p*D + t (first axis only; the
      grouped 1x1 conv keeps its per-group input order, so the second axis is unchanged)
"""
import re

import numpy as np

_PART = re.compile(r"^paddle head-interleaved qkv conv rows, ([qkv]) part, (\d+) heads of (\d+)$")
_PLANAR = re.compile(r"^paddle head-interleaved to planar qkv channels, (\d+) heads of (\d+)$")


def convert(transform, paddle_array, torch_array):
    m = _PART.match(transform)
    if m is not None:
        idx = "qkv".index(m.group(1))
        heads, dim = int(m.group(2)), int(m.group(3))
        rows = np.array([h * 3 * dim + idx * dim + t for h in range(heads) for t in range(dim)])
        out = np.ascontiguousarray(paddle_array.reshape(3 * heads * dim, -1)[rows])
    else:
        m = _PLANAR.match(transform)
        if m is None:
            return None
        heads, dim = int(m.group(1)), int(m.group(2))
        perm = np.array([h * 3 * dim + p * dim + t for p in range(3) for h in range(heads) for t in range(dim)])
        out = np.ascontiguousarray(paddle_array[perm])
    if out.shape != torch_array.shape:
        raise ValueError(f"port_efficientvit hook: {out.shape} != {torch_array.shape}")
    return out
