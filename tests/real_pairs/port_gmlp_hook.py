"""port_gmlp transform: the paddle side packs the gMLP channel projection into ONE Linear
`channel_proj_in` (weight [32, 128] = [in, out], bias [128]; columns / elements 0:64 are the u
half, 64:128 the v half, split with paddle.chunk); the torch side has two Linears `fc_u` and
`fc_v` (weight [64, 32] = [out, in], bias [64]).

  "paddle columns A:B ..., transposed" -> paddle_array[:, A:B].T   (a weight half)
  "paddle elements A:B ..."            -> paddle_array[A:B]        (a bias half)
"""
import re

import numpy as np

_HALF = re.compile(r"^paddle (columns|elements) (\d+):(\d+)")


def convert(transform, paddle_array, torch_array):
    m = _HALF.match(transform)
    if m is None:
        return None
    a, b = int(m.group(2)), int(m.group(3))
    part = paddle_array[:, a:b].T if m.group(1) == "columns" else paddle_array[a:b]
    return np.ascontiguousarray(part).reshape(torch_array.shape)
