"""port_gpt_neox transform: the paddle side has SEPARATE q_proj / k_proj / v_proj Linears
(weight [64, 64], [in, out]; bias [64]); the torch side has ONE fused `query_key_value`
Linear(64, 192) (weight [192, 64], [out, in]; bias [192]) whose output is viewed
[B, L, heads, 3 * d] and split per head, so its rows are packed [h, 3, d]:
    row h*3*d + idx*d + t  =  head h, part idx (0 q / 1 k / 2 v), dim t.

Transforms:
  "paddle X weight into the head-packed qkv rows [h, 3, d], X part, N heads of D, transposed"
      torch_array[rows] = paddle_array.T   (rows = [h*3*D + idx*D + t for h, t])
  "paddle X bias into the head-packed qkv elements [h, 3, d], X part, N heads of D"
      torch_array[rows] = paddle_array
X = q, k or v; the three paddle tensors fill disjoint rows of the same torch tensor.
"""
import re

import numpy as np

_QKV = re.compile(r"^paddle ([qkv]) (weight|bias) into the head-packed qkv (rows|elements) \[h, 3, d\], "
                  r"\1 part, (\d+) heads of (\d+)(, transposed)?$")


def convert(transform, paddle_array, torch_array):
    m = _QKV.match(transform)
    if m is None:
        return None
    idx = "qkv".index(m.group(1))
    heads, dim = int(m.group(4)), int(m.group(5))
    rows = np.array([h * 3 * dim + idx * dim + t for h in range(heads) for t in range(dim)])
    val = paddle_array.T if m.group(6) else paddle_array
    out = torch_array.copy()
    if out[rows].shape != val.shape:
        raise ValueError(f"port_gpt_neox hook: {transform!r}: {val.shape} vs {out[rows].shape}")
    out[rows] = val
    return out
