"""port_cspdarknet transform: the paddle stem is a Focus (space-to-depth, then a 3x3 conv, pad 1,
over 12 channels); the torch stem is one 6x6 conv, stride 2, pad 2, over the raw 3 channels
(the YOLOv5 v6.0 replacement of Focus). Both compute the same map.

Focus channel g*3 + c (g = pixel phase) holds image channel c at rows 2i + dy, columns 2j + dx,
with the phases in the order g = 0: (dy, dx) = (0, 0), 1: (1, 0), 2: (0, 1), 3: (1, 1).
A 3x3 tap (ki, kj) of the Focus conv reads image row 2(i - 1 + ki) + dy = 2i - 2 + (2 ki + dy),
which is tap (2 ki + dy, 2 kj + dx) of the 6x6 stride-2 pad-2 conv. So

Transform: "paddle Focus 3x3 conv over 4 pixel phases (ee, oe, eo, oo) to a 6x6 stride-2 conv"
  torch[o, c, 2 ki + dy, 2 kj + dx] = paddle[o, g * 3 + c, ki, kj]
"""
import numpy as np

_FOCUS = "paddle Focus 3x3 conv over 4 pixel phases (ee, oe, eo, oo) to a 6x6 stride-2 conv"
_PHASES = ((0, 0), (1, 0), (0, 1), (1, 1))  # (dy, dx) of phase g


def convert(transform, paddle_array, torch_array):
    if transform != _FOCUS:
        return None
    cout, cin4, kh, kw = paddle_array.shape
    cin = cin4 // 4
    out = np.zeros((cout, cin, 2 * kh, 2 * kw), dtype=paddle_array.dtype)
    for g, (dy, dx) in enumerate(_PHASES):
        out[:, :, dy::2, dx::2] = paddle_array[:, g * cin:(g + 1) * cin]
    if out.shape != torch_array.shape:
        raise ValueError(f"port_cspdarknet hook: {out.shape} != {torch_array.shape}")
    return out
