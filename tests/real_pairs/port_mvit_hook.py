"""port_mvit transforms outside verify_truth's built-in vocabulary.

1. The paddle side projects q / k / v with three separate 1x1 Conv2D layers (weight
   [out, in, 1, 1]); the torch side has ONE fused `qkv` nn.Linear (weight [3 * out, in], rows
   q | k | v, each head-major, the same channel order as the paddle conv outputs).
   Transform: "torch rows A:B of the fused qkv (X), paddle 1x1 conv kernel squeezed"
     torch_array[A:B] = paddle_array.reshape(out, in)        (the rest of torch_array is kept)
   (The biases are plain "torch elements A:B ..." slices, handled by verify_truth itself.)

2. The paddle side keeps the two decomposed relative-position tables in ONE packed parameter
   `rel_bias.table` [2, L, hd] (row 0: height, row 1: width); the torch side has two parameters
   `rel_pos_h` / `rel_pos_w` [L, hd].
   Transform: "paddle packed table row R (height|width)"
     torch_array = paddle_array[R]
"""

import re

import numpy as np

_QKV = re.compile(r"^torch rows (\d+):(\d+) of the fused qkv \([qkv]\), paddle 1x1 conv kernel squeezed$")
_TABLE = re.compile(r"^paddle packed table row ([01]) \((height|width)\)$")


def convert(transform, paddle_array, torch_array):
    m = _QKV.match(transform)
    if m is not None:
        a, b = int(m.group(1)), int(m.group(2))
        val = paddle_array.reshape(paddle_array.shape[0], paddle_array.shape[1])
        out = torch_array.copy()
        if out[a:b].shape != val.shape:
            raise ValueError(f"port_mvit hook: {val.shape} does not fit rows {a}:{b} of {out.shape}")
        out[a:b] = val
        return out
    m = _TABLE.match(transform)
    if m is not None:
        out = np.ascontiguousarray(paddle_array[int(m.group(1))])
        if out.shape != torch_array.shape:
            raise ValueError(f"port_mvit hook: {out.shape} != {torch_array.shape}")
        return out
    return None
