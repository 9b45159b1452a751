"""port_autoformer transforms (paddle array -> torch array):

1. "paddle columns A:B of the fused <qkv|kv> Linear, transposed": the paddle side packs
   q | k | v (self-correlation, weight [16, 48]) or k | v (cross-correlation, kv_proj weight
   [16, 32]) along the OUTPUT columns of one Linear ([in, out]); the torch side has separate
   query / key / value projections ([out, in]).
       torch_array = paddle_array[:, A:B].T
2. "paddle elements A:B of the fused <qkv|kv> bias": the matching slice of the fused bias.
       torch_array = paddle_array[A:B]
3. "paddle Linear [in, out] into torch Conv1d kernel 1 [out, in, 1]": the feed-forward is two
   Linears on the paddle side and two kernel-1 Conv1d on the torch side.
       torch_array = paddle_array.T[:, :, None]
"""
import re

import numpy as np

_COLS = re.compile(r"^paddle columns (\d+):(\d+) of the fused (qkv|kv) Linear, transposed$")
_ELEMS = re.compile(r"^paddle elements (\d+):(\d+) of the fused (qkv|kv) bias$")
_CONV1 = "paddle Linear [in, out] into torch Conv1d kernel 1 [out, in, 1]"


def convert(transform, paddle_array, torch_array):
    m = _COLS.match(transform)
    if m is not None:
        out = paddle_array[:, int(m.group(1)):int(m.group(2))].T
    elif (m := _ELEMS.match(transform)) is not None:
        out = paddle_array[int(m.group(1)):int(m.group(2))]
    elif transform == _CONV1:
        out = paddle_array.T[:, :, None]
    else:
        return None
    out = np.ascontiguousarray(out)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_autoformer hook: {transform!r}: {out.shape} != {torch_array.shape}")
    return out
