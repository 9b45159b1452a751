"""port_neural_ode transforms: the paddle side's concat linears (`ConcatLinear._layer`, weight
[1 + in, out], [in, out] layout) hold the time weight as ROW 0 and the state weights as rows
1..in; the torch side splits them into an nn.Linear(in, out) (weight [out, in]) and a separate
time vector [out] added as t * vector.

Transforms:
  "paddle rows A:B, transposed"   torch_array = paddle_array[A:B].T   (the state part)
  "paddle row I"                  torch_array = paddle_array[I]       (the time row)
"""
import re

import numpy as np

_ROWS_T = re.compile(r"^paddle rows (\d+):(\d+), transposed$")
_ROW = re.compile(r"^paddle row (\d+)$")


def convert(transform, paddle_array, torch_array):
    m = _ROWS_T.match(transform)
    if m is not None:
        out = paddle_array[int(m.group(1)):int(m.group(2))].T
    elif (m := _ROW.match(transform)) is not None:
        out = paddle_array[int(m.group(1))]
    else:
        return None
    out = np.ascontiguousarray(out)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_neural_ode hook: {transform!r}: {out.shape} != {torch_array.shape}")
    return out
