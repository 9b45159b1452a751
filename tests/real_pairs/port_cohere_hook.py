"""port_cohere transform: the paddle side packs q | k | v in ONE `qkv` Linear (weight [32, 96],
[in, out], output columns q 0:32, k 32:64, v 64:96) and gate | up in ONE `w_gate_up` Linear
(weight [32, 128], gate columns 0:64, up 64:128); the torch side has separate q_proj / k_proj /
v_proj and gate_proj / up_proj Linears (weight [out, in]).

Transform: "paddle columns A:B of the fused NAME [IN, OUT] (PART part), transposed"
  torch_array = paddle_array[:, A:B].T
"""
import re

import numpy as np

_COLS = re.compile(r"^paddle columns (\d+):(\d+) of the fused \w+ \[\d+, \d+\] \(\w+ part\), transposed$")


def convert(transform, paddle_array, torch_array):
    m = _COLS.match(transform)
    if m is None:
        return None
    a, b = int(m.group(1)), int(m.group(2))
    out = np.ascontiguousarray(paddle_array[:, a:b].T)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_cohere hook: {out.shape} != {torch_array.shape}")
    return out
