"""port_deit transforms outside verify_truth's vocabulary.

1. Token slots along the token axis (axis 1). The paddle side keeps [cls, dist, patches] with
   separate `cls_token` / `distillation_token` [1, 1, 32] and a position table [1, 18, 32] in that
   order; the torch side keeps the two extra tokens packed in ONE `tokens` [1, 2, 32] (cls, dist)
   and a position table [1, 18, 32] ordered [patches, cls, dist].

   Transform: "paddle axis 1 A:B into torch axis 1 C:D ..."
     torch_array[:, C:D] = paddle_array[:, A:B]   (the rest of torch_array is kept)

2. Patch projection. paddle: Conv2D weight [32, 3, 4, 4] ([out, c, kh, kw]); torch: Linear
   weight [32, 48] over patches flattened in (p1 p2 c) order (einops 'b c (h p1) (w p2) ->
   b (h w) (p1 p2 c)').

   Transform: "paddle conv kernel [out, c, kh, kw] as torch linear [out, (kh kw c)]"
     torch_array = paddle_array.transpose(0, 2, 3, 1).reshape(out, -1)
"""
import re

import numpy as np

_AXIS1 = re.compile(r"^paddle axis 1 (\d+):(\d+) into torch axis 1 (\d+):(\d+)\b")
_CONV = "paddle conv kernel [out, c, kh, kw] as torch linear [out, (kh kw c)]"


def convert(transform, paddle_array, torch_array):
    m = _AXIS1.match(transform)
    if m is not None:
        a, b, c, d = (int(g) for g in m.groups())
        out = np.array(torch_array, copy=True)
        out[:, c:d] = paddle_array[:, a:b]
        return out
    if transform.startswith(_CONV):
        out = np.ascontiguousarray(paddle_array.transpose(0, 2, 3, 1).reshape(paddle_array.shape[0], -1))
        if out.shape != torch_array.shape:
            raise ValueError(f"port_deit hook: {out.shape} != {torch_array.shape}")
        return out
    return None
