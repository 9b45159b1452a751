"""port_botnet transform: the paddle side has three Linears `q_proj` / `k_proj` / `v_proj`
(weight [C, 8], [in, out]) on flattened pixels; the torch side has ONE packed 1x1 conv
`to_qkv` (weight [24, C, 1, 1]) whose output channels are q | k | v (8 each, head-major).

Transform: "paddle Linear transposed into torch rows A:B of a 1x1 conv"
  torch_array[A:B, :, 0, 0] = paddle_array.T
"""
import re

import numpy as np

_ROWS = re.compile(r"^paddle Linear transposed into torch rows (\d+):(\d+) of a 1x1 conv$")


def convert(transform, paddle_array, torch_array):
    m = _ROWS.match(transform)
    if m is None:
        return None
    a, b = int(m.group(1)), int(m.group(2))
    out = np.array(torch_array, copy=True)
    val = paddle_array.T
    if out[a:b, :, 0, 0].shape != val.shape or out.shape[2:] != (1, 1):
        raise ValueError(f"port_botnet hook: {val.shape} does not fit rows {a}:{b} of {out.shape}")
    out[a:b, :, 0, 0] = val
    return out
