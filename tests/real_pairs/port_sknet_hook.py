"""port_sknet transforms: the paddle side computes the SK squeeze and the per-branch attention with
nn.Linear (weight [in, out]); the torch side with 1x1 nn.Conv2d on [B, C, 1, 1] maps (weight
[out, in, 1, 1]), the attention of all M branches fused in ONE conv `fcs` of M * C output channels
(branch m = output channels m*C:(m+1)*C).

Transforms:
  "paddle linear [in, out] as torch 1x1 conv [out, in, 1, 1]"
      torch_array = paddle_array.T.reshape(torch_array.shape)
  "paddle linear [in, out] as torch 1x1 conv rows A:B [out, in, 1, 1]"
      torch_array[A:B] = paddle_array.T reshaped to [B - A, in, 1, 1]; the other rows are kept
"""
import re

import numpy as np

_ROWS = re.compile(r"^paddle linear \[in, out\] as torch 1x1 conv rows (\d+):(\d+) \[out, in, 1, 1\]$")


def convert(transform, paddle_array, torch_array):
    if transform == "paddle linear [in, out] as torch 1x1 conv [out, in, 1, 1]":
        return np.ascontiguousarray(paddle_array.T.reshape(torch_array.shape))
    m = _ROWS.match(transform)
    if m is None:
        return None
    a, b = int(m.group(1)), int(m.group(2))
    out = torch_array.copy()
    out[a:b] = paddle_array.T.reshape(out[a:b].shape)
    return out
