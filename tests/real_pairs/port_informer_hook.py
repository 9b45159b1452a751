"""port_informer transforms outside verify_truth's built-in vocabulary (they slice or reshape the
PADDLE tensor):

- the paddle attention has ONE fused `qkv` Linear (weight [32, 96], [in, out], output columns
  [q | k | v]); the torch AttentionLayer has separate query / key / value projections
  (weight [32, 32], [out, in]):
    "paddle qkv columns A:B (X part), transposed"  -> paddle_array[:, A:B].T
    "paddle qkv elements A:B (X part)"             -> paddle_array[A:B]          (the bias)
- the paddle feed-forward is two Linears (weight [in, out]); the torch one is two 1x1 Conv1d
  (weight [out, in, 1]):
    "paddle Linear [in, out] transposed to conv1d kernel [out, in, 1]" -> paddle_array.T[:, :, None]
"""
import re

import numpy as np

_COLS = re.compile(r"^paddle qkv columns (\d+):(\d+) \([qkv] part\), transposed$")
_ELEMS = re.compile(r"^paddle qkv elements (\d+):(\d+) \([qkv] part\)$")
_CONV = "paddle Linear [in, out] transposed to conv1d kernel [out, in, 1]"


def convert(transform, paddle_array, torch_array):
    m = _COLS.match(transform)
    if m is not None:
        out = paddle_array[:, int(m.group(1)) : int(m.group(2))].T
    elif (m := _ELEMS.match(transform)) is not None:
        out = paddle_array[int(m.group(1)) : int(m.group(2))]
    elif transform == _CONV:
        out = paddle_array.T[:, :, None]
    else:
        return None
    out = np.ascontiguousarray(out)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_informer hook: {transform!r}: {out.shape} != {torch_array.shape}")
    return out
