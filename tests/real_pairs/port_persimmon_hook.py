"""port_persimmon transform: the paddle side has ONE fused `query_key_value` Linear (weight
[32, 96], [in, out]; bias [96]) whose output columns are laid out HEAD BY HEAD, as Persimmon's
checkpoint: [h0: q k v][h1: q k v]..., D columns each ([B, L, H, 3, D]); the torch side has
separate `wq` / `wk` / `wv` Linears (weight [32, 32], [out, in]; bias [32]) whose output rows are
head-major (head h = rows h*D:(h+1)*D).

Transforms:
  "paddle query_key_value columns, X part (X = q, k or v), N heads of D, transposed"
      cols = [h*3*D + idx*D + t for h in range(N) for t in range(D)], idx = 0 / 1 / 2 for q / k / v
      torch_array = paddle_array[:, cols].T           (the weight)
  "paddle query_key_value elements, X part, N heads of D"
      torch_array = paddle_array[cols]                (the bias)
"""
import re

import numpy as np

_QKV = re.compile(r"^paddle query_key_value (columns|elements), ([qkv]) part, (\d+) heads of (\d+)(, transposed)?$")


def convert(transform, paddle_array, torch_array):
    m = _QKV.match(transform)
    if m is None:
        return None
    kind, idx = m.group(1), "qkv".index(m.group(2))
    heads, dim = int(m.group(3)), int(m.group(4))
    cols = np.array([h * 3 * dim + idx * dim + t for h in range(heads) for t in range(dim)])
    if kind == "columns":
        out = paddle_array[:, cols]
        if m.group(5):
            out = out.T
    else:
        out = paddle_array[cols]
    out = np.ascontiguousarray(out)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_persimmon hook: {out.shape} != {torch_array.shape}")
    return out
