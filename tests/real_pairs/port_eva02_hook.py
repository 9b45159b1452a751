"""port_eva02 transforms: the paddle side has ONE fused `qkv` Linear (weight [32, 96], [in, out],
output columns q | k | v, head-major inside each part) and separate `q_bias` / `v_bias`
vectors; its rotary pairs features INTERLEAVED (2j, 2j + 1). The torch side has separate
`query` / `key` / `value` Linears (weight [32, 32], [out, in]) and a ROTATE-HALF rotary
(pairs j, j + D/2), so the q / k features of every head are stored in rotate-half order:
torch feature j = paddle feature 2j, torch feature j + D/2 = paddle feature 2j + 1
(perm = [0, 2, 4, 6, 1, 3, 5, 7] for D = 8; the LLaMA checkpoint-conversion trick). v is not
permuted.

Transforms:
  "paddle qkv columns A:B, transposed"
      torch_array = paddle_array[:, A:B].T
  "paddle qkv columns A:B, transposed, rows interleaved -> rotate-half per head of D"
      torch_array = paddle_array[:, A:B].T[rows], rows = [h*D + perm[j] for h, j]
  "paddle vector, interleaved -> rotate-half per head of D"
      torch_array = paddle_array[rows]
"""
import re

import numpy as np

_COLS = re.compile(r"^paddle qkv columns (\d+):(\d+), transposed(, rows interleaved -> rotate-half per head of (\d+))?$")
_VEC = re.compile(r"^paddle vector, interleaved -> rotate-half per head of (\d+)$")


def _rows(n, d):
    perm = [2 * j for j in range(d // 2)] + [2 * j + 1 for j in range(d // 2)]
    return np.array([h * d + perm[j] for h in range(n // d) for j in range(d)])


def convert(transform, paddle_array, torch_array):
    m = _COLS.match(transform)
    if m is not None:
        out = paddle_array[:, int(m.group(1)) : int(m.group(2))].T
        if m.group(3):
            out = out[_rows(out.shape[0], int(m.group(4)))]
    else:
        m = _VEC.match(transform)
        if m is None:
            return None
        out = paddle_array[_rows(paddle_array.shape[0], int(m.group(1)))]
    out = np.ascontiguousarray(out)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_eva02 hook: {out.shape} != {torch_array.shape}")
    return out
