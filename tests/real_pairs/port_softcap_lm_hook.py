"""port_softcap_lm transforms outside verify_truth's built-in vocabulary.

1. "plus one (paddle Gemma RMSNorm stores w and scales by 1 + w; torch nn.RMSNorm stores 1 + w)"
     torch_array = paddle_array + 1

2. "torch rows A:B of the fused wqkv, N heads of D, rotate_half -> interleaved rotary layout,
    paddle transposed"
   The paddle q_proj / k_proj weight is [in, out] with each head's D output columns in the
   rotate_half layout (dims i and i + D/2 form a rotary pair); the torch wqkv weight is
   [out, in] with each head's D rows in the interleaved layout (dims 2i and 2i + 1 form a pair).
   For head h and i < D/2:
     torch row A + h*D + 2i     = paddle column h*D + i
     torch row A + h*D + 2i + 1 = paddle column h*D + i + D/2
   (the Meta <-> HF LLaMA q / k permutation). The other rows of the fused tensor are kept.
"""
import re

import numpy as np

_PERM = re.compile(r"^torch rows (\d+):(\d+) of the fused wqkv, (\d+) heads of (\d+), "
                   r"rotate_half -> interleaved rotary layout, paddle transposed$")


def convert(transform, paddle_array, torch_array):
    if transform.startswith("plus one"):
        out = paddle_array.reshape(torch_array.shape) + 1.0
        return out.astype(torch_array.dtype)
    m = _PERM.match(transform)
    if m is None:
        return None
    a, b, heads, dim = (int(g) for g in m.groups())
    if b - a != heads * dim or paddle_array.shape[1] != heads * dim:
        raise ValueError(f"port_softcap_lm hook: bad shapes for {transform!r}: {paddle_array.shape}")
    half = dim // 2
    src_cols = []
    for h in range(heads):
        for i in range(half):
            src_cols += [h * dim + i, h * dim + i + half]
    out = torch_array.copy()
    out[a:b] = paddle_array[:, np.array(src_cols)].T
    return out
