"""port_gin transforms: the paddle side has ONE readout Linear(48, 4) over the concatenation of the
three per-layer pooled states (weight [48, 4], [in, out]; bias [4]); the torch side has one
Linear(16, 4) head per layer (`linears_prediction.l`, weight [4, 16], [out, in]; bias [4]) whose
scores are summed. Sum of the heads == the concat Linear when

  linears_prediction.l.weight = paddle readout.weight[16*l : 16*(l+1), :].T
  linears_prediction.0.bias   = paddle readout.bias          (transform "none")
  linears_prediction.1/2.bias = 0                             (the paddle bias is carried whole by head 0)

Transforms:
  "paddle rows A:B of the concat readout weight, transposed" -> paddle_array[A:B, :].T
  "zeros: the paddle bias is carried whole by linears_prediction.0.bias" -> zeros like torch_array
"""
import re

import numpy as np

_ROWS = re.compile(r"^paddle rows (\d+):(\d+) of the concat readout weight, transposed$")


def convert(transform, paddle_array, torch_array):
    if transform.startswith("zeros: the paddle bias is carried whole by"):
        return np.zeros_like(torch_array)
    m = _ROWS.match(transform)
    if m is None:
        return None
    a, b = int(m.group(1)), int(m.group(2))
    out = np.ascontiguousarray(paddle_array[a:b, :].T)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_gin hook: {out.shape} != {torch_array.shape}")
    return out
