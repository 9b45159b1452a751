"""A value found as one share of a larger value of the other trace.

One port computes q, k and v with one fused projection (``[b, s, 3 * d]``), the other with
three (``[b, s, d]`` each, maybe viewed as ``[b, s, heads, head_dim]``). The three calls
pair with no call of the fused side, so nothing compares their outputs; a module only the
unfused side calls on them (an attention kernel of its own) receives values no pair says are
right. They are right when the fused side's output holds them: contiguous blocks along its last
axis, the same leading axes (``share_found``).
"""

from __future__ import annotations

import math

import numpy as np

from padiff_trace import Record

from ..alignment._calls import TraceView
from ._boundary import RELATION_REL, agrees

__all__ = ["share_found"]

_MAX_READ = 1 << 22  # elements of a candidate read to look for the share
_MAX_PARTS = 8  # a fused value holds at most this many shares (q|k|v, gate|up, i|f|g|o)


def share_found(other: TraceView, r: Record) -> bool:
    """Whether ``r``'s value is a block along the last axis of a forward value of the same step
    in ``other`` that is 2 to 8 times as large, with the same leading axes (``r``'s trailing axes
    merged: a head split ``[b, s, h, d]`` against ``[b, s, 3 * h * d]``), to within
    ``RELATION_REL`` in relative L2. Blocks start at multiples of ``r``'s width."""
    if not r.has_data or r.numel == 0 or r.numel > _MAX_READ:
        return False
    x: np.ndarray | None = None
    for c in other.calls.get(r.step, ()):
        for y in (*c.inputs, *c.outputs):
            if not y.is_tensor or not y.has_data or y.numel % r.numel or not 2 <= y.numel // r.numel <= _MAX_PARTS:
                continue
            lead = tuple(y.shape[:-1])
            if y.numel > _MAX_READ or not lead or tuple(r.shape[:len(lead)]) != lead:
                continue
            width = r.numel // max(math.prod(lead), 1)
            if x is None:
                x = np.asarray(r.read(), dtype=np.float64)
            z = np.asarray(y.read(), dtype=np.float64)
            xs = x.reshape(*lead, width)
            if any(agrees(xs, z[..., j * width:(j + 1) * width], RELATION_REL) for j in range(z.shape[-1] // width)):
                return True
    return False
