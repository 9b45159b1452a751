"""port_svtr transforms outside verify_truth's built-in vocabulary.

1. The paddle side has ONE fused `qkv` Linear per attention (weight [dim, 3 dim], [in, out];
   bias [3 dim]) whose output columns are q | k | v blocks of `dim` columns each (reshaped to
   [B, N, 3, heads, head_dim]); the torch side has separate `q_proj` / `k_proj` / `v_proj`
   Linears (weight [dim, dim], [out, in]). A block of PADDLE columns becomes a whole torch tensor:
     "paddle qkv columns A:B (X part), transposed" -> torch_array = paddle_array[:, A:B].T
     "paddle qkv elements A:B (X part)"            -> torch_array = paddle_array[A:B]
2. The position embedding is token-major on the paddle side ([1, H*W, C], added to the flattened
   tokens) and channels-first on the torch side ([1, C, H, W], added to the conv map):
     "paddle token-major [1, H*W, C] to torch channels-first [1, C, H, W]"
       -> torch_array = paddle_array.reshape(1, H, W, C).transpose(0, 3, 1, 2)
   (H, W, C are read from the torch array's shape.)
"""
import re

import numpy as np

_COLS = re.compile(r"^paddle qkv columns (\d+):(\d+) \([qkv] part\), transposed$")
_ELEMS = re.compile(r"^paddle qkv elements (\d+):(\d+) \([qkv] part\)$")
_POS = "paddle token-major [1, H*W, C] to torch channels-first [1, C, H, W]"


def convert(transform, paddle_array, torch_array):
    m = _COLS.match(transform)
    if m is not None:
        out = paddle_array[:, int(m.group(1)):int(m.group(2))].T
    elif (m := _ELEMS.match(transform)) is not None:
        out = paddle_array[int(m.group(1)):int(m.group(2))]
    elif transform == _POS:
        _, c, h, w = torch_array.shape
        out = paddle_array.reshape(1, h, w, c).transpose(0, 3, 1, 2)
    else:
        return None
    out = np.ascontiguousarray(out)
    if out.shape != torch_array.shape:
        raise ValueError(f"port_svtr hook: {transform!r}: {out.shape} != {torch_array.shape}")
    return out
