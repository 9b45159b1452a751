"""port_olmo transform: the paddle side packs q | k | v in ONE `att_proj` Linear (weight [32, 96],
[in, out], columns 0:32 q, 32:64 k, 64:96 v) and the SwiGLU halves in ONE `ff_proj` Linear
(weight [32, 128], columns 0:64 the "x" / up half, 64:128 the gate half); the torch side has
separate q_proj / k_proj / v_proj and up_proj / gate_proj Linears (weights [out, in]). So each
torch tensor is a column slice of a packed PADDLE tensor, transposed (verify_truth's built-in
vocabulary only slices packed torch tensors).

Transform: "paddle columns A:B of the fused NAME (WHAT), transposed"
  torch_array = paddle_array[:, A:B].T
"""
import re

import numpy as np

_COLS = re.compile(r"^paddle columns (\d+):(\d+) of the fused \w+ \(.*\), transposed$")


def convert(transform, paddle_array, torch_array):
    m = _COLS.match(transform)
    if m is None:
        return None
    a, b = int(m.group(1)), int(m.group(2))
    out = np.ascontiguousarray(paddle_array[:, a:b].T)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_olmo hook: {out.shape} != {torch_array.shape}")
    return out
