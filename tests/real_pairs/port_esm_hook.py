"""port_esm transform: the paddle side keeps separate q_proj / k_proj Linears (weight [32, 32],
[in, out]; bias [32]) whose output features are in the ROTATE-HALF rotary order (pairs (i, i + 4)
of each head of 8); the torch side has ONE fused `qkv` Linear (weight [96, 32], [out, in]; rows
0:32 q, 32:64 k, 64:96 v) whose q / k rows are in the INTERLEAVED rotary order (pairs (2i, 2i + 1)).

Transform: "rotate-half -> interleaved per head of D, into qkv rows A:B[, paddle transposed]"
  perm[j] = j // 2 + (j % 2) * D / 2 for j in range(D)   (torch feature j of a head takes
                                                          paddle feature perm[j] of that head)
  rows = [h * D + perm[j] for h in range(n_heads) for j in range(D)]
  torch_array[A:B] = (paddle_array.T if transposed else paddle_array)[rows]
The v part is a plain slice ("torch rows 64:96 ..., paddle transposed"), handled by verify_truth.
"""
import re

import numpy as np

_ROPE = re.compile(r"^rotate-half -> interleaved per head of (\d+), into qkv rows (\d+):(\d+)(, paddle transposed)?$")


def rows_for(width, dim):
    perm = [j // 2 + (j % 2) * (dim // 2) for j in range(dim)]
    return np.array([h * dim + perm[j] for h in range(width // dim) for j in range(dim)])


def convert(transform, paddle_array, torch_array):
    m = _ROPE.match(transform)
    if m is None:
        return None
    dim, a, b = int(m.group(1)), int(m.group(2)), int(m.group(3))
    val = paddle_array.T if m.group(4) else paddle_array
    rows = rows_for(b - a, dim)
    out = torch_array.copy()
    out[a:b] = val[rows]
    return out
