"""port_crossvit transforms outside verify_truth's built-in vocabulary (paddle -> torch).

- "paddle conv kernel [D, C, p, p] to torch (p1 p2 c) patch columns": the paddle patch
  embedding is a Conv2D (weight [D, 3, p, p]); the torch side cuts patches as
  "b c (h p1) (w p2) -> b (h w) (p1 p2 c)" and applies a Linear (weight [D, p*p*3], [out, in]):
  torch_array = paddle_array.transpose(0, 2, 3, 1).reshape(D, p*p*C)
- "paddle columns A:B of fused wkv [k | v], transposed": the paddle cross-attention has ONE
  `wkv` Linear (weight [D, 2D], [in, out], columns [k | v]); torch has separate `to_k` / `to_v`
  ([out, in]): torch_array = paddle_array[:, A:B].T
- "paddle elements A:B of fused wkv bias [k | v]": torch_array = paddle_array[A:B]
- "paddle tokens A:B of pos_embed [1, 1 + N, D]": the paddle position embedding covers CLS +
  patches; torch splits it into `pos_cls` [1, 1, D] and `pos_patch` [1, N, D]:
  torch_array = paddle_array[:, A:B, :]
"""
import re

import numpy as np

_RANGE = re.compile(r"^paddle (columns|elements|tokens) (\d+):(\d+) of ")


def convert(transform, paddle_array, torch_array):
    if transform == "paddle conv kernel [D, C, p, p] to torch (p1 p2 c) patch columns":
        out = paddle_array.transpose(0, 2, 3, 1).reshape(paddle_array.shape[0], -1)
    else:
        m = _RANGE.match(transform)
        if m is None:
            return None
        kind, a, b = m.group(1), int(m.group(2)), int(m.group(3))
        if kind == "columns" and transform.endswith("transposed"):
            out = paddle_array[:, a:b].T
        elif kind == "elements":
            out = paddle_array[a:b]
        elif kind == "tokens":
            out = paddle_array[:, a:b, :]
        else:
            return None
    out = np.ascontiguousarray(out)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_crossvit hook: {transform!r}: {out.shape} != {torch_array.shape}")
    return out
