"""port_cswin transforms: the paddle block has ONE fused `qkv` Linear (weight [C, 3C], [in, out])
whose output columns are q | k | v, each laid out [vertical-branch heads | horizontal-branch
heads] (C/2 columns per branch); the torch block has separate `to_q` / `to_k` / `to_v` Linears
(weight [C, C], [out, in]) whose output rows are laid out [horizontal-branch heads |
vertical-branch heads]. The projection after the attention therefore reads its input channels
in the two branch orders too.

Transforms:
  "paddle qkv columns, X part, branch halves swapped, transposed" (X = q, k or v)
      part = paddle_array[:, i*C:(i+1)*C]; torch_array = concat(part[:, C/2:], part[:, :C/2]).T
  "paddle qkv elements, X part, branch halves swapped"   (the [3C] bias)
      part = paddle_array[i*C:(i+1)*C]; torch_array = concat(part[C/2:], part[:C/2])
  "transpose, input branch halves swapped"               (proj weight, paddle [in, out])
      torch_array = concat(paddle_array[C/2:], paddle_array[:C/2]).T
"""

import re

import numpy as np

_QKV = re.compile(r"^paddle qkv (columns|elements), ([qkv]) part, branch halves swapped(, transposed)?$")
_PROJ = "transpose, input branch halves swapped"


def _swap(a, axis):
    half = a.shape[axis] // 2
    first, second = np.split(a, [half], axis=axis)
    return np.concatenate([second, first], axis=axis)


def convert(transform, paddle_array, torch_array):
    if transform == _PROJ:
        out = _swap(paddle_array, 0).T
    else:
        m = _QKV.match(transform)
        if m is None:
            return None
        i = "qkv".index(m.group(2))
        if m.group(1) == "columns":
            c = paddle_array.shape[1] // 3
            out = _swap(paddle_array[:, i * c : (i + 1) * c], 1)
            if m.group(3):
                out = out.T
        else:
            c = paddle_array.shape[0] // 3
            out = _swap(paddle_array[i * c : (i + 1) * c], 0)
    out = np.ascontiguousarray(out)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_cswin hook: {out.shape} != {torch_array.shape}")
    return out
