"""port_hyena transform: the paddle `in_proj` packs its 3 * 32 outputs as (x0 | x1 | v) (safari
order: outer gate, inner gate, value), the torch `proj_in` as (v | x1 | x2) (value, outer gate,
inner gate). The depthwise short convolution that follows keeps that channel order on each side,
so its weight [96, 1, 3] and bias [96] are reordered the same way.

  "... torch blocks = paddle blocks I, J, K ..." -> split the paddle array (transposed first when
      the text says "paddle transposed") into 3 equal blocks along axis 0 and concatenate blocks
      I, J, K (torch block 0 is paddle block I, ...).

With paddle (x0 | x1 | v) and torch (v | x1 | x2), x1 = x0 and x2 = x1: "paddle blocks 2, 0, 1"."""
import re

import numpy as np

_BLOCKS = re.compile(r"torch blocks = paddle blocks (\d), (\d), (\d)")


def convert(transform, paddle_array, torch_array):
    m = _BLOCKS.search(transform)
    if m is None:
        return None
    src = paddle_array.T if "paddle transposed" in transform else paddle_array
    parts = np.split(src, 3, axis=0)
    out = np.concatenate([parts[int(i)] for i in m.groups()], axis=0)
    return np.ascontiguousarray(out).reshape(torch_array.shape)
