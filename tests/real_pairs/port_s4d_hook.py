"""port_s4d transforms outside verify_truth's vocabulary.

The paddle side stores each complex S4D parameter as real pairs in the last axis (`B`, `C`:
[H, N/2, 2], index 0 = real part, 1 = imaginary part); the torch side keeps separate real and
imaginary tensors ([H, N/2] each).

  "paddle real pairs [..., 0] (real part)"       torch = paddle[..., 0]
  "paddle real pairs [..., 1] (imaginary part)"  torch = paddle[..., 1]
"""
import re

import numpy as np

_PART = re.compile(r"^paddle real pairs \[\.\.\., ([01])\] \((real|imaginary) part\)$")


def convert(transform, paddle_array, torch_array):
    m = _PART.match(transform)
    if m is None:
        return None
    out = np.ascontiguousarray(paddle_array[..., int(m.group(1))])
    if out.shape != torch_array.shape:
        raise ValueError(f"port_s4d hook: {transform!r}: {out.shape} != {torch_array.shape}")
    return out
