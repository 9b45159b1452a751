"""port_nbeats transform: the paddle side packs each block's theta into ONE Linear(32, nb + nf)
(weight [32, nb + nf], [in, out]; bias [nb + nf]) whose output columns are theta_b | theta_f;
the torch side has two Linears `theta_b_fc` / `theta_f_fc` (weight [n, 32], [out, in]).

Transforms:
  "paddle columns A:B of the packed theta, transposed" -> torch_array = paddle_array[:, A:B].T
  "paddle elements A:B of the packed theta bias"       -> torch_array = paddle_array[A:B]
"""
import re

import numpy as np

_COLS = re.compile(r"^paddle columns (\d+):(\d+) of the packed theta, transposed$")
_ELEMS = re.compile(r"^paddle elements (\d+):(\d+) of the packed theta bias$")


def convert(transform, paddle_array, torch_array):
    m = _COLS.match(transform)
    if m is not None:
        out = paddle_array[:, int(m.group(1)):int(m.group(2))].T
    else:
        m = _ELEMS.match(transform)
        if m is None:
            return None
        out = paddle_array[int(m.group(1)):int(m.group(2))]
    out = np.ascontiguousarray(out)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_nbeats hook: {out.shape} != {torch_array.shape}")
    return out
