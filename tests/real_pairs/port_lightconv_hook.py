"""port_lightconv transform: the dynamic-conv kernel predictor.

The paddle side's `weight_linear` is Linear(24, H * K) with weight [in, out] whose output columns
are HEAD-major (column h * K + k); the torch side's `weight_linear` is Linear(24, K * H) with
weight [out, in] whose output rows are KERNEL-major (row k * H + h).

Transforms:
  "paddle head-major columns h*K+k to torch kernel-major rows k*H+h, H=3 K=5, transposed"
      (weight)  torch[k * H + h, :] = paddle[:, h * K + k]
  "paddle head-major elements h*K+k to torch kernel-major elements k*H+h, H=3 K=5"
      (bias)    torch[k * H + h] = paddle[h * K + k]
"""
import re

import numpy as np

_RE = re.compile(r"^paddle head-major (columns|elements) h\*K\+k to torch kernel-major (rows|elements) k\*H\+h, "
                 r"H=(\d+) K=(\d+)(, transposed)?$")


def convert(transform, paddle_array, torch_array):
    m = _RE.match(transform)
    if m is None:
        return None
    heads, ksize = int(m.group(3)), int(m.group(4))
    # order[j] = paddle index feeding torch index j = k * H + h
    order = np.array([h * ksize + k for k in range(ksize) for h in range(heads)])
    if m.group(5):
        out = paddle_array[:, order].T
    else:
        out = paddle_array[order]
    out = np.ascontiguousarray(out)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_lightconv hook: {out.shape} != {torch_array.shape}")
    return out
