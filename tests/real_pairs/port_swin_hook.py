"""port_swin transforms that verify_truth.py cannot express by itself.

1. The paddle attention has ONE fused qkv Linear (weight [C, 3C], bias [3C], q | k | v); the torch
   attention has separate q / k / v Linears (weight [C, C]). One paddle tensor fills three torch
   tensors, so the slice is taken on the PADDLE side:
     "paddle columns A:B of the fused qkv, transposed"  torch = paddle[:, A:B].T
     "paddle elements A:B of the fused qkv bias"        torch = paddle[A:B]

2. Patch merging: both sides concatenate the 2x2 neighbours of a token into 4C features, in a
   different order. paddle (PaddleClas): (0,0), (1,0), (0,1), (1,1) of (row offset, column
   offset); torch (view + permute, "b (h p1) (w p2) c -> b h w (p1 p2 c)"): (0,0), (0,1), (1,0),
   (1,1). Torch chunk j of C features is paddle chunk [0, 2, 1, 3][j]. The LayerNorm(4C) weight
   and bias and the rows of the paddle reduction weight [4C, 2C] are permuted by chunks:
     "merge permute: chunks of C, torch chunk j = paddle chunk [0, 2, 1, 3][j]"  (vectors)
     "merge permute: chunks of C, torch chunk j = paddle chunk [0, 2, 1, 3][j], paddle rows, transposed"
   torch = paddle.reshape(4, C, ...)[[0, 2, 1, 3]].reshape(4C, ...) (then .T for the Linear).
"""
import re

import numpy as np

_QKV = re.compile(r"^paddle (columns|elements) (\d+):(\d+) of the fused qkv")
_MERGE = re.compile(r"^merge permute: chunks of (\d+), torch chunk j = paddle chunk \[(\d), (\d), (\d), (\d)\]\[j\]")


def convert(transform, paddle_array, torch_array):
    m = _QKV.match(transform)
    if m is not None:
        a, b = int(m.group(2)), int(m.group(3))
        if m.group(1) == "columns":
            out = paddle_array[:, a:b]
            if "transposed" in transform:
                out = out.T
        else:
            out = paddle_array[a:b]
        return np.ascontiguousarray(out)
    m = _MERGE.match(transform)
    if m is not None:
        c = int(m.group(1))
        perm = [int(m.group(i)) for i in range(2, 6)]
        arr = paddle_array.reshape(4, c, *paddle_array.shape[1:])[perm].reshape(paddle_array.shape)
        if "transposed" in transform:
            arr = arr.T
        return np.ascontiguousarray(arr)
    return None
