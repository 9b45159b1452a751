"""port_focalnet transforms: the paddle side works channels-last with nn.Linear (weight [in, out])
and ONE fused `f` Linear(C, 2C + 3) whose output columns are q (0:C) | ctx (C:2C) | gates
(2C:2C+3); the torch side is channels-first with 1x1 nn.Conv2d (weight [out, in, 1, 1]) and
separate `to_q` / `to_ctx` / `to_gates` convs.

Transforms:
  "paddle columns A:B, transposed, as a 1x1 conv kernel"
      torch_array = paddle_array[:, A:B].T.reshape(out, in, 1, 1)
  "paddle elements A:B"
      torch_array = paddle_array[A:B]
  "transpose, as a 1x1 conv kernel"
      torch_array = paddle_array.T.reshape(out, in, 1, 1)
"""
import re

import numpy as np

_COLS = re.compile(r"^paddle columns (\d+):(\d+), transposed, as a 1x1 conv kernel$")
_ELEMS = re.compile(r"^paddle elements (\d+):(\d+)$")


def _check(out, torch_array):
    if out.shape != torch_array.shape:
        raise ValueError(f"port_focalnet hook: {out.shape} != {torch_array.shape}")
    return np.ascontiguousarray(out)


def convert(transform, paddle_array, torch_array):
    if transform == "transpose, as a 1x1 conv kernel":
        return _check(paddle_array.T.reshape(torch_array.shape), torch_array)
    m = _COLS.match(transform)
    if m is not None:
        a, b = int(m.group(1)), int(m.group(2))
        return _check(paddle_array[:, a:b].T.reshape(torch_array.shape), torch_array)
    m = _ELEMS.match(transform)
    if m is not None:
        a, b = int(m.group(1)), int(m.group(2))
        return _check(paddle_array[a:b], torch_array)
    return None
