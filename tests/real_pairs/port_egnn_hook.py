"""port_egnn transform: the paddle side's first edge Linear is one fused Linear over
cat(h_i, h_j, d_ij, a_ij) (weight [35, 16], [in, out]); the torch side splits it into
`proj_i` (h_i), `proj_j` (h_j) and `proj_edge` (d_ij, a_ij), each [16, in_part] ([out, in]).

Transform: "paddle rows A:B of the fused edge Linear (...), transposed"
  torch_array = paddle_array[A:B].T
(the slice is taken from the PADDLE input rows; the torch tensor is filled whole).
"""
import re

import numpy as np

_ROWS = re.compile(r"^paddle rows (\d+):(\d+) of the fused edge Linear \([^)]*\), transposed$")


def convert(transform, paddle_array, torch_array):
    m = _ROWS.match(transform)
    if m is None:
        return None
    a, b = int(m.group(1)), int(m.group(2))
    out = np.ascontiguousarray(paddle_array[a:b].T)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_egnn hook: {out.shape} != {torch_array.shape}")
    return out
