"""port_twins_svt transforms: the paddle LSA has ONE fused `qkv` Linear (weight [C, 3C], [in, out],
bias [3C]) whose output columns are [q | k | v] (C each, head-major inside a part); the torch LSA
has SEPARATE `query` / `key` / `value` Linears (weight [C, C], [out, in], bias [C]). So each torch
tensor takes a slice of a packed PADDLE tensor (verify_truth's built-in vocabulary only slices
packed torch tensors):

  "paddle columns A:B of the fused qkv ..., transposed" -> torch_array = paddle_array[:, A:B].T
  "paddle elements A:B of the fused qkv bias ..."       -> torch_array = paddle_array[A:B]
"""
import re

import numpy as np

_COLS = re.compile(r"^paddle columns (\d+):(\d+) of the fused qkv\b.*, transposed$")
_ELEMS = re.compile(r"^paddle elements (\d+):(\d+) of the fused qkv bias\b")


def convert(transform, paddle_array, torch_array):
    m = _COLS.match(transform)
    if m is not None:
        a, b = int(m.group(1)), int(m.group(2))
        out = np.ascontiguousarray(paddle_array[:, a:b].T)
    else:
        m = _ELEMS.match(transform)
        if m is None:
            return None
        a, b = int(m.group(1)), int(m.group(2))
        out = np.ascontiguousarray(paddle_array[a:b])
    if out.shape != torch_array.shape:
        raise ValueError(f"port_twins_svt hook: {out.shape} != {torch_array.shape}")
    return out
