"""port_efficientformer transforms outside verify_truth's vocabulary.

1. The paddle attention has ONE fused `qkv` Linear (weight [32, 96], [in, out]; bias [96]; output
   columns q | k | v); the torch attention has separate `q` / `k` / `v` Linears (weight [32, 32],
   [out, in]; bias [32]). The slice is taken on the PADDLE side:
     "paddle columns A:B of qkv (X part), transposed"  -> torch_array = paddle_array[:, A:B].T
     "paddle elements A:B of qkv bias (X part)"        -> torch_array = paddle_array[A:B]
2. The paddle token MLP uses Linears (weight [in, out]); the torch one uses nn.Conv1d with
   kernel size 1 (weight [out, in, 1]):
     "paddle Linear transposed, torch Conv1d kernel axis appended" -> paddle_array.T[:, :, None]
"""
import re

import numpy as np

_COLS = re.compile(r"^paddle columns (\d+):(\d+) of qkv \([qkv] part\), transposed$")
_ELEMS = re.compile(r"^paddle elements (\d+):(\d+) of qkv bias \([qkv] part\)$")
_CONV1D = "paddle Linear transposed, torch Conv1d kernel axis appended"


def convert(transform, paddle_array, torch_array):
    m = _COLS.match(transform)
    if m:
        out = paddle_array[:, int(m.group(1)):int(m.group(2))].T
    elif (m := _ELEMS.match(transform)):
        out = paddle_array[int(m.group(1)):int(m.group(2))]
    elif transform == _CONV1D:
        out = paddle_array.T[:, :, None]
    else:
        return None
    out = np.ascontiguousarray(out)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_efficientformer hook: {out.shape} != {torch_array.shape}")
    return out
