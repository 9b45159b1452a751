"""port_performer transforms outside verify_truth's built-in vocabulary (paddle -> torch).

The paddle attention has ONE fused `qkv` Linear (weight [32, 96], [in, out], columns
[q | k | v], heads contiguous inside each part; bias [96]); the torch attention has separate
`to_q` / `to_k` / `to_v` Linears (weight [32, 32], [out, in]; bias [32]).

- "paddle columns A:B of fused qkv [q | k | v], transposed": torch_array = paddle_array[:, A:B].T
- "paddle elements A:B of fused qkv bias [q | k | v]":      torch_array = paddle_array[A:B]

(The per-layer random feature buffers use the built-in "torch rows l:l+1 ..., paddle
transposed" rule: paddle [m, d] = [24, 16] per layer -> slot l of torch's stacked [2, 16, 24].)
"""
import re

import numpy as np

_RANGE = re.compile(r"^paddle (columns|elements) (\d+):(\d+) of fused qkv")


def convert(transform, paddle_array, torch_array):
    m = _RANGE.match(transform)
    if m is None:
        return None
    kind, a, b = m.group(1), int(m.group(2)), int(m.group(3))
    if kind == "columns":
        if not transform.endswith("transposed"):
            return None
        out = paddle_array[:, a:b].T
    else:
        out = paddle_array[a:b]
    out = np.ascontiguousarray(out)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_performer hook: {transform!r}: {out.shape} != {torch_array.shape}")
    return out
