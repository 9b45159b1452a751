"""port_dinov2 transform: the paddle side embeds patches with ONE nn.Linear(192, 32) (weight
[192, 32], [in, out]) over patches flattened in (patch row, patch column, channel) order; the
torch side uses the reference's strided nn.Conv2d(3, 32, kernel 8, stride 8) (weight
[32, 3, 8, 8], [out, channel, row, column]).

Transform: "paddle Linear over (row, column, channel) patches to torch conv kernel, P x P patch, C channels"
  torch_array = paddle_array.reshape(P, P, C, OUT).transpose(3, 2, 0, 1)
"""
import re

import numpy as np

_PATCH = re.compile(r"^paddle Linear over \(row, column, channel\) patches to torch conv kernel, (\d+) x (\d+) patch, (\d+) channels$")


def convert(transform, paddle_array, torch_array):
    m = _PATCH.match(transform)
    if m is None:
        return None
    p1, p2, c = int(m.group(1)), int(m.group(2)), int(m.group(3))
    out = np.ascontiguousarray(paddle_array.reshape(p1, p2, c, -1).transpose(3, 2, 0, 1))
    if out.shape != torch_array.shape:
        raise ValueError(f"port_dinov2 hook: {out.shape} != {torch_array.shape}")
    return out
