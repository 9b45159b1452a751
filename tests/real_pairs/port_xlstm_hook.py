"""port_xlstm transforms outside verify_truth's vocabulary.

1. "paddle gain minus one": the paddle norms (nn.LayerNorm / nn.GroupNorm, bias-free) store the
   gain itself; the torch side stores it residual-parametrised (xLSTM repo style), weight =
   1 + delta.  torch_array = paddle_array - 1.
2. "paddle columns A:B, transposed": the paddle up-projection is ONE fused nn.Linear(16, 64)
   (weight [in, out], columns 0:32 = the memory path xm, 32:64 = the gate path z); the torch side
   has two separate nn.Linear(16, 32) (weight [out, in]).  torch_array = paddle_array[:, A:B].T
3. "paddle elements A:B": the matching slice of the fused bias.  torch_array = paddle_array[A:B]
"""
import re

import numpy as np

_COLS = re.compile(r"^paddle columns (\d+):(\d+), transposed")
_ELEMS = re.compile(r"^paddle elements (\d+):(\d+)")


def convert(transform, paddle_array, torch_array):
    if transform.startswith("paddle gain minus one"):
        out = paddle_array.reshape(torch_array.shape) - 1.0
    elif (m := _COLS.match(transform)) is not None:
        out = paddle_array[:, int(m.group(1)):int(m.group(2))].T
    elif (m := _ELEMS.match(transform)) is not None:
        out = paddle_array[int(m.group(1)):int(m.group(2))]
    else:
        return None
    out = np.ascontiguousarray(out, dtype=paddle_array.dtype)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_xlstm hook: {transform!r}: {out.shape} != {torch_array.shape}")
    return out
