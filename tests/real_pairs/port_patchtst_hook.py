"""port_patchtst transforms outside verify_truth's built-in vocabulary.

1. The paddle side has ONE fused `attn.qkv` Linear (weight [16, 48], [in, out]; bias [48]) with
   q | k | v in column blocks of 16; the torch side has separate W_Q / W_K / W_V ([out, in]).
     "paddle columns A:B of the fused qkv weight, transposed" -> paddle_array[:, A:B].T
     "paddle elements A:B of the fused qkv bias"             -> paddle_array[A:B]
2. The flatten heads read the per-channel encoder map in different orders: paddle flattens
   [N, d] (patch-major, input row n * d + j), torch flattens [d, N] (dim-major, input column
   j * N + n). Paddle weight [N * d, P] ([in, out]) -> torch weight [P, d * N]:
     "paddle rows reordered from (patch, dim) to (dim, patch) flatten order, N patches of D
      dims, transposed" -> paddle_array.reshape(N, D, P).transpose(1, 0, 2).reshape(D * N, P).T
"""
import re

import numpy as np

_COLS = re.compile(r"^paddle columns (\d+):(\d+) of the fused qkv weight, transposed$")
_ELEMS = re.compile(r"^paddle elements (\d+):(\d+) of the fused qkv bias$")
_HEAD = re.compile(r"^paddle rows reordered from \(patch, dim\) to \(dim, patch\) flatten order, "
                   r"(\d+) patches of (\d+) dims, transposed$")


def convert(transform, paddle_array, torch_array):
    m = _COLS.match(transform)
    if m:
        out = paddle_array[:, int(m.group(1)):int(m.group(2))].T
    elif _ELEMS.match(transform):
        m = _ELEMS.match(transform)
        out = paddle_array[int(m.group(1)):int(m.group(2))]
    elif _HEAD.match(transform):
        m = _HEAD.match(transform)
        n, d = int(m.group(1)), int(m.group(2))
        p = paddle_array.shape[1]
        out = paddle_array.reshape(n, d, p).transpose(1, 0, 2).reshape(d * n, p).T
    else:
        return None
    out = np.ascontiguousarray(out)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_patchtst hook: {transform!r}: {out.shape} != {torch_array.shape}")
    return out
