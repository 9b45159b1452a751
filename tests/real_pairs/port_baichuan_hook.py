"""port_baichuan transform: the paddle side has ONE fused `W_pack` Linear (weight [48, 144],
[in, out]) whose output columns are in Baichuan's block layout [q (48) | k (48) | v (48)], each
part head-major; the torch side has separate `to_q` / `to_k` / `to_v` Linears (weight [48, 48],
[out, in]).

Transform: "paddle W_pack columns A:B (X part), transposed"
  torch_array = paddle_array[:, A:B].T
"""
import re

import numpy as np

_COLS = re.compile(r"^paddle W_pack columns (\d+):(\d+) \([qkv] part\), transposed$")


def convert(transform, paddle_array, torch_array):
    m = _COLS.match(transform)
    if m is None:
        return None
    a, b = int(m.group(1)), int(m.group(2))
    out = np.ascontiguousarray(paddle_array[:, a:b].T)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_baichuan hook: {out.shape} != {torch_array.shape}")
    return out
