"""port_dcn_cross transforms: the paddle side packs what the torch side keeps apart.

- ONE paddle embedding table [36, 6] for all fields (row offsets 0 / 11 / 18 / 31) vs one torch
  table per field:
    "paddle rows A:B of the one offset table (field F)"       -> paddle_array[A:B]
- experts STACKED in paddle create_parameter tensors (U / V [3, 32, 8], C [3, 8, 8]) vs one
  torch LowRankExpert per expert with its own Linears:
    "paddle expert E of the stacked U / C tensor"             -> paddle_array[E]
    "paddle expert E of the stacked V tensor, transposed"     -> paddle_array[E].T
- ONE paddle gate Linear(32, 3) (weight [32, 3], [in, out]) vs one torch Linear(32, 1) per expert:
    "paddle column E of the fused gate weight, transposed"    -> paddle_array[:, E:E+1].T
- ONE paddle logit Linear(56, 1) on concat(cross, deep) (weight [56, 1]) vs two torch heads
  (cross_head [1, 32], deep_head [1, 24]):
    "paddle rows A:B of the logit weight, transposed"         -> paddle_array[A:B].T
"""
import re

import numpy as np

_ROWS = re.compile(r"^paddle rows (\d+):(\d+) of the (one offset table|logit weight)")
_EXPERT = re.compile(r"^paddle expert (\d+) of the stacked [UVC] tensor")
_GATE = re.compile(r"^paddle column (\d+) of the fused gate weight, transposed$")


def convert(transform, paddle_array, torch_array):
    m = _ROWS.match(transform)
    if m is not None:
        out = paddle_array[int(m.group(1)):int(m.group(2))]
        if ", transposed" in transform:
            out = out.T
    elif (m := _EXPERT.match(transform)) is not None:
        out = paddle_array[int(m.group(1))]
        if ", transposed" in transform:
            out = out.T
    elif (m := _GATE.match(transform)) is not None:
        e = int(m.group(1))
        out = paddle_array[:, e:e + 1].T
    else:
        return None
    out = np.ascontiguousarray(out)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_dcn_cross hook: {transform!r}: {out.shape} != {torch_array.shape}")
    return out
