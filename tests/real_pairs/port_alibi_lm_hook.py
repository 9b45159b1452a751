"""port_alibi_lm transform: the paddle side has ONE fused `qkv_proj` Linear (weight [32, 96],
[in, out]) whose output columns are laid out head by head, [h0: q k v][h1: q k v]..., D columns
each; the torch side has separate `query` / `key` / `value` Linears (weight [32, 32], [out, in])
whose output rows are head-major (head h = rows h*D:(h+1)*D).

Transform: "paddle head-interleaved qkv columns, X part (X = q, k or v), N heads of D, transposed"
  cols = [h*3*D + idx*D + t for h in range(N) for t in range(D)], idx = 0 / 1 / 2 for q / k / v
  torch_array = paddle_array[:, cols].T
"""
import re

import numpy as np

_QKV = re.compile(r"^paddle head-interleaved qkv columns, ([qkv]) part, (\d+) heads of (\d+), transposed$")


def convert(transform, paddle_array, torch_array):
    m = _QKV.match(transform)
    if m is None:
        return None
    idx = "qkv".index(m.group(1))
    heads, dim = int(m.group(2)), int(m.group(3))
    cols = np.array([h * 3 * dim + idx * dim + t for h in range(heads) for t in range(dim)])
    out = np.ascontiguousarray(paddle_array[:, cols].T)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_alibi_lm hook: {out.shape} != {torch_array.shape}")
    return out
