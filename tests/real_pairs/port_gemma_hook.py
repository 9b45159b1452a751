"""port_gemma transforms outside verify_truth's vocabulary.

1. RMSNorm weight convention. The paddle side stores Gemma's checkpoint convention: the norm
   weight is the OFFSET FROM ONE (applied as x_hat * (1 + w), zero-initialised). The torch side
   stores the FULL scale (applied as x_hat * w, one-initialised). Same shape [32], different
   value:
     "paddle offset-from-one norm weight -> torch full scale (plus one)"
       torch_array = 1 + paddle_array

2. Packed GeGLU input projection. The paddle side has ONE `gate_up` Linear(32, 128) (weight
   [in, out] = [32, 128]; columns 0:64 = gate, 64:128 = up); the torch side has separate
   `gate_proj` / `up_proj` Linear(32, 64) (weight [out, in] = [64, 32]):
     "paddle columns A:B of the packed gate_up (gate|up), transposed"
       torch_array = paddle_array[:, A:B].T
"""
import re

import numpy as np

_NORM = "paddle offset-from-one norm weight -> torch full scale (plus one)"
_COLS = re.compile(r"^paddle columns (\d+):(\d+) of the packed gate_up \((gate|up)\), transposed$")


def convert(transform, paddle_array, torch_array):
    if transform == _NORM:
        out = (1.0 + paddle_array.astype(np.float64)).astype(paddle_array.dtype)
    else:
        m = _COLS.match(transform)
        if m is None:
            return None
        a, b = int(m.group(1)), int(m.group(2))
        out = np.ascontiguousarray(paddle_array[:, a:b].T)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_gemma hook: {transform!r}: {out.shape} != {torch_array.shape}")
    return out
