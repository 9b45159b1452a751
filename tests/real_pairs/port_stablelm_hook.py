"""port_stablelm transforms outside verify_truth's built-in vocabulary.

1. Rotary pair permutation. The paddle side rotates the first 8 of each head's 16 dims in the
   half-split (NeoX / HF) convention: dim i is paired with dim i + 4. The torch side uses the
   interleaved (GPT-J) convention: dim 2i is paired with dim 2i + 1. So every torch tensor that
   indexes q or k head dims is a permutation of the paddle one: within each head, torch dim
   2i = paddle dim i, torch dim 2i + 1 = paddle dim i + 4 (i < 4), dims 8..15 unchanged.

   "[paddle transposed, ]rotary pairs half-split to interleaved (H heads of D, R rotary dims),
    torch (rows|elements) A:B"
     val = paddle_array (.T first when "paddle transposed"), shape [H*D, ...] or [H*D]
     idx[h*D + t] = h*D + perm[t], perm[2i] = i, perm[2i + 1] = i + R/2 (i < R/2), perm[t] = t
     torch_array[A:B] = val[idx] (a [D] vector placed in rows A:B of a [heads, D] matrix is
     reshaped to [B - A, D]).

2. Column slices of the paddle side's fused gate|up Linear (weight [64, 192], [in, out]):
   "paddle columns A:B of the fused NAME (WHAT), transposed" -> paddle_array[:, A:B].T
"""
import re

import numpy as np

_PERM = re.compile(
    r"^(paddle transposed, )?rotary pairs half-split to interleaved \((\d+) heads? of (\d+), (\d+) rotary dims\), "
    r"torch (rows|elements) (\d+):(\d+)$"
)
_COLS = re.compile(r"^paddle columns (\d+):(\d+) of the fused \w+ \(\w+\), transposed$")


def _perm(heads, dim, rot):
    half = rot // 2
    per = [(t // 2 if t % 2 == 0 else t // 2 + half) if t < rot else t for t in range(dim)]
    return np.array([h * dim + p for h in range(heads) for p in per])


def convert(transform, paddle_array, torch_array):
    m = _PERM.match(transform)
    if m is not None:
        heads, dim, rot = int(m.group(2)), int(m.group(3)), int(m.group(4))
        a, b = int(m.group(6)), int(m.group(7))
        val = paddle_array.T if m.group(1) else paddle_array
        val = val[_perm(heads, dim, rot)]
        out = torch_array.copy()
        out[a:b] = val.reshape(out[a:b].shape)
        return out
    m = _COLS.match(transform)
    if m is not None:
        a, b = int(m.group(1)), int(m.group(2))
        out = np.ascontiguousarray(paddle_array[:, a:b].T)
        if out.shape != torch_array.shape:
            raise ValueError(f"port_stablelm hook: {out.shape} != {torch_array.shape}")
        return out
    return None
