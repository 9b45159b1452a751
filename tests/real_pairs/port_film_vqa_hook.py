"""port_film_vqa transforms: the paddle side has ONE fused `film_gen` Linear (weight [24, 96],
[in, out]; bias [96]) whose output columns are ALL gammas first (block i = columns 16i:16i+16),
then ALL betas (block i = columns 48+16i:48+16i+16), and it uses gamma as is (x * gamma + beta).
The torch side has one `film_heads.i` Linear per block (weight [32, 24], [out, in]) whose output
rows are [delta_gamma (0:16) | beta (16:32)], used as (1 + delta_gamma) * x + beta.

Each torch tensor is filled by two pairs (its gamma rows, then its beta rows):
  "paddle columns A:B, transposed, into torch rows C:D"
      torch_array[C:D] = paddle_array[:, A:B].T
  "paddle elements A:B into torch elements C:D"
      torch_array[C:D] = paddle_array[A:B]
  "paddle elements A:B minus 1 into torch elements C:D"      (the gamma bias: gamma = 1 + delta)
      torch_array[C:D] = paddle_array[A:B] - 1
"""
import re

import numpy as np

_COLS = re.compile(r"^paddle columns (\d+):(\d+), transposed, into torch rows (\d+):(\d+)$")
_ELEMS = re.compile(r"^paddle elements (\d+):(\d+)( minus 1)? into torch elements (\d+):(\d+)$")


def convert(transform, paddle_array, torch_array):
    out = np.array(torch_array, copy=True)
    m = _COLS.match(transform)
    if m is not None:
        a, b, c, d = (int(g) for g in m.groups())
        out[c:d] = paddle_array[:, a:b].T
        return out
    m = _ELEMS.match(transform)
    if m is not None:
        a, b, c, d = int(m.group(1)), int(m.group(2)), int(m.group(4)), int(m.group(5))
        val = paddle_array[a:b]
        out[c:d] = val - 1.0 if m.group(3) else val
        return out
    return None
