"""port_chatglm transforms: the paddle side packs tensors that the torch side keeps separate, so
each torch tensor takes a SLICE of a paddle tensor (the reverse of verify_truth's built-in
"torch rows A:B ..." rules, which fill a slice of a packed torch tensor).

- paddle `query_key_value` Linear: weight [64, 128] ([in, out]), output columns [q 0:64 | k 64:96
  | v 96:128]; bias [128] with the same layout. torch `q_proj` / `k_proj` / `v_proj`: weight
  [out, in], bias [out].
- paddle `dense_h_to_4h` Linear: weight [64, 256], output columns [gate 0:128 | up 128:256].
  torch `w1` (gate) / `w3` (up): weight [128, 64].

Transforms:
  "paddle columns A:B, transposed ..."  -> torch_array = paddle_array[:, A:B].T
  "paddle elements A:B ..."             -> torch_array = paddle_array[A:B]
"""
import re

import numpy as np

_COLS = re.compile(r"^paddle columns (\d+):(\d+), transposed\b")
_ELEMS = re.compile(r"^paddle elements (\d+):(\d+)\b")


def convert(transform, paddle_array, torch_array):
    m = _COLS.match(transform)
    if m is not None:
        a, b = int(m.group(1)), int(m.group(2))
        out = np.ascontiguousarray(paddle_array[:, a:b].T)
    else:
        m = _ELEMS.match(transform)
        if m is None:
            return None
        a, b = int(m.group(1)), int(m.group(2))
        out = np.ascontiguousarray(paddle_array[a:b])
    if out.shape != torch_array.shape:
        raise ValueError(f"port_chatglm hook: {transform!r}: {out.shape} != {torch_array.shape}")
    return out
