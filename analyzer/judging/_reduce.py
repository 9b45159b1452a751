"""Gradients of broadcast tensors: the larger side summed down to the smaller one's shape.

One port may keep a tensor in a broadcastable shape (HF's position embeddings ``[1, S, D]``)
where the other materialises it (paddle's ``[B, S, D]``). Forward values compare broadcast
(``_metrics.BroadcastView``); their *gradients* do not: the gradient of a broadcast tensor
is the sum of the gradient over the broadcast axes. So a gradient pair whose shapes differ
by broadcasting compares the larger side summed over those axes with the smaller side.
"""

from __future__ import annotations

import numpy as np

from padiff_trace import Record
from padiff_trace.arrays import decode

from ..alignment._records import RecordLike
from ._metrics import BroadcastView

__all__ = ["GRAD_ROLES", "SummedView", "summed_pair"]

GRAD_ROLES = ("grad_output", "grad_input")


class SummedView(BroadcastView):
    """A record summed (in float64, stored back in its dtype) over the axes that broadcast
    ``shape`` to the record's shape; usable wherever a record is."""

    def flat(self) -> np.ndarray:
        if self._flat is None:
            base = self.base
            full = decode(base.trace.read_stored(base, 0, base.numel), base.dtype).reshape(base.shape)
            lead = len(base.shape) - len(self.shape)
            axes = tuple(range(lead)) + tuple(
                lead + k for k, n in enumerate(self.shape) if n == 1 and base.shape[lead + k] != 1
            )
            total = full.sum(axis=axes, dtype=np.float64, keepdims=True)
            self._flat = np.ascontiguousarray(total.reshape(self.shape).astype(full.dtype)).reshape(-1)
        return self._flat


def summed_pair(ra: Record, rb: Record, common: tuple[int, ...]) -> tuple[RecordLike, RecordLike] | None:
    """Gradients ``ra``/``rb`` (same layout) whose shapes broadcast to ``common``: the larger one
    summed down to the smaller one's shape; None when neither shape is ``common`` itself."""
    if rb.shape == common and ra.shape != common:
        return ra, SummedView(rb, ra.shape)
    if ra.shape == common and rb.shape != common:
        return SummedView(ra, rb.shape), rb
    return None
