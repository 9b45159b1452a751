"""port_realnvp transforms: the paddle side's masked 8-dim coupling nets -> torch's 4-dim nets.

paddle (masks) works on all 8 dims in the original order; torch (split + flip) sees the vector in
the original order in couplings 0 and 2 (conditioning dims 0..3, transformed dims 4..7) and
REVERSED in couplings 1 and 3 (conditioning dims 7, 6, 5, 4; transformed dims 3, 2, 1, 0).
Only the paddle rows / columns / elements of the dims that matter are copied:

  "paddle rows A:B[ reversed][, transposed]"            -> paddle_array[A:B] (or its reverse),
                                                          transposed, as the whole torch tensor
  "paddle columns A:B[ reversed], transposed, into torch rows C:D ..."
                                                       -> paddle_array[:, A:B] (or reversed),
                                                          transposed, into torch rows C:D
  "paddle elements A:B[ reversed][, into torch elements C:D ...]"
                                                       -> paddle_array[A:B] (or reversed), into
                                                          torch elements C:D (or the whole tensor)
"""
import re

import numpy as np

_SRC = re.compile(r"^paddle (rows|columns|elements) (\d+):(\d+)( reversed)?")
_DST = re.compile(r"into torch (rows|elements) (\d+):(\d+)")


def convert(transform, paddle_array, torch_array):
    m = _SRC.match(transform)
    if m is None:
        return None
    kind, a, b = m.group(1), int(m.group(2)), int(m.group(3))
    idx = np.arange(a, b)
    if m.group(4):
        idx = idx[::-1]
    val = paddle_array[:, idx] if kind == "columns" else paddle_array[idx]
    if "transposed" in transform:
        val = val.T
    d = _DST.search(transform)
    if d is None:
        return np.ascontiguousarray(val).reshape(torch_array.shape)
    out = torch_array.copy()
    out[int(d.group(2)):int(d.group(3))] = val
    return out
