"""port_ddpm_unet transforms: the paddle attention block projects with four 1x1 Conv2D layers
`q` / `k` / `v` / `proj_out` (weight [32, 32, 1, 1], [out, in, 1, 1]); the torch side uses
nn.MultiheadAttention, whose packed `in_proj_weight` [96, 32] holds q | k | v rows ([out, in])
and whose `out_proj.weight` is [32, 32].

Transforms:
  "paddle 1x1 conv squeezed into torch rows A:B"  torch_array[A:B] = paddle_array[:, :, 0, 0]
  "paddle 1x1 conv squeezed"                      torch_array = paddle_array[:, :, 0, 0]
"""
import re

import numpy as np

_ROWS = re.compile(r"^paddle 1x1 conv squeezed into torch rows (\d+):(\d+)$")


def _squeeze(arr):
    if arr.ndim != 4 or arr.shape[2:] != (1, 1):
        raise ValueError(f"port_ddpm_unet hook: not a 1x1 conv weight: {arr.shape}")
    return arr[:, :, 0, 0]


def convert(transform, paddle_array, torch_array):
    if transform == "paddle 1x1 conv squeezed":
        out = np.ascontiguousarray(_squeeze(paddle_array))
        if out.shape != torch_array.shape:
            raise ValueError(f"port_ddpm_unet hook: {out.shape} != {torch_array.shape}")
        return out
    m = _ROWS.match(transform)
    if m is None:
        return None
    a, b = int(m.group(1)), int(m.group(2))
    out = np.array(torch_array, copy=True)
    val = _squeeze(paddle_array)
    if out[a:b].shape != val.shape:
        raise ValueError(f"port_ddpm_unet hook: {val.shape} does not fit rows {a}:{b} of {out.shape}")
    out[a:b] = val
    return out
