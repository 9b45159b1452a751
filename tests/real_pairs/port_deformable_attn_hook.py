"""port_deformable_attn transform: the paddle side has SEPARATE `sampling_offsets` (Linear 32 -> 48)
and `attention_weights` (Linear 32 -> 24) whose output columns are ordered [heads, LEVELS,
POINTS(, xy)]; the torch side has ONE packed `sampling_proj` Linear(32, 72) (weight [out, in])
whose rows 0:48 are the offsets ordered [heads, POINTS, LEVELS, xy] and rows 48:72 the attention
logits ordered [heads, POINTS, LEVELS].

Transform: "torch rows A:B of the packed sampling_proj: paddle columns [N heads, L levels,
P points(, xy)] reordered to [heads, points, levels(, xy)], paddle transposed" (a weight), or the
same with "torch elements A:B" and without "paddle transposed" (a bias):
  perm = arange(N*L*P*X).reshape(N, L, P, X).transpose(0, 2, 1, 3).reshape(-1)
  torch_array[A:B] = paddle_array[:, perm].T   (weight)  /  paddle_array[perm]   (bias)
"""
import re

import numpy as np

_PACK = re.compile(r"^torch (rows|elements) (\d+):(\d+) of the packed sampling_proj: paddle columns "
                   r"\[(\d+) heads, (\d+) levels, (\d+) points(, xy)?\] reordered to "
                   r"\[heads, points, levels(, xy)?\]")


def convert(transform, paddle_array, torch_array):
    m = _PACK.match(transform)
    if m is None:
        return None
    kind, a, b = m.group(1), int(m.group(2)), int(m.group(3))
    heads, levels, points = int(m.group(4)), int(m.group(5)), int(m.group(6))
    xy = 2 if m.group(7) else 1
    perm = np.arange(heads * levels * points * xy).reshape(heads, levels, points, xy)
    perm = perm.transpose(0, 2, 1, 3).reshape(-1)
    if kind == "rows":
        if "paddle transposed" not in transform:
            raise ValueError(f"port_deformable_attn hook: a weight needs 'paddle transposed': {transform!r}")
        val = paddle_array[:, perm].T
    else:
        val = paddle_array[perm]
    out = torch_array.copy()
    if out[a:b].shape != val.shape:
        raise ValueError(f"port_deformable_attn hook: {val.shape} != {out[a:b].shape}")
    out[a:b] = val
    return out
