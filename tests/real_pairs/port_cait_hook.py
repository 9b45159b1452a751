"""port_cait transform: the paddle self-attention has ONE fused `qkv` Linear (weight [32, 96],
[in, out]; bias [96]) whose output columns are laid out [q | k | v], 32 each (head-major inside
each part); the torch self-attention has separate `to_q` / `to_k` / `to_v` Linears (weight
[32, 32], [out, in]; bias [32]). So each torch tensor takes a SLICE OF THE PADDLE tensor (the
built-in "torch columns / rows A:B" vocabulary slices the torch tensor instead).

Transforms:
  "paddle qkv columns A:B, transposed"  torch_array = paddle_array[:, A:B].T   (weights)
  "paddle qkv elements A:B"             torch_array = paddle_array[A:B]        (biases)
"""
import re

import numpy as np

_QKV = re.compile(r"^paddle qkv (columns|elements) (\d+):(\d+)(, transposed)?$")


def convert(transform, paddle_array, torch_array):
    m = _QKV.match(transform)
    if m is None:
        return None
    a, b = int(m.group(2)), int(m.group(3))
    if m.group(1) == "columns":
        out = paddle_array[:, a:b]
        if m.group(4):
            out = out.T
    else:
        out = paddle_array[a:b]
    out = np.ascontiguousarray(out)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_cait hook: {out.shape} != {torch_array.shape}")
    return out
