"""A weight or gradient one side computes from others (a weight-normed layer's ``g * v / |v|``),
usable wherever a record is (a ``RecordView``): what weight pairing hands a pair when one library
keeps g and v and the other the plain weight (``padiff_trace.matching._reparam``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from padiff_trace import STAT_FIELDS, Record
from padiff_trace.arrays import stats_tuple

from ._records import RecordView

__all__ = ["ComputedView", "ComputedWeight"]


class ComputedView(RecordView):
    """The values ``compute()`` returns, in ``shape`` (default ``base``'s) and ``base``'s dtype,
    materialised once, with ``base``'s metadata (its sequence number, step, module) and a
    position that says what was computed: a weight-normed layer's weight, one side's value in
    the other's layout, the parts of a layer joined or summed."""

    def __init__(self, base: Record, compute: Callable[[], np.ndarray], what: str,
                 shape: tuple[int, ...] | None = None) -> None:
        super().__init__(base, tuple(base.shape) if shape is None else shape, f"{base.position} ({what})")
        self._compute = compute
        self._flat: np.ndarray | None = None
        self._stats: dict[str, float] | None = None

    def flat(self) -> np.ndarray:
        if self._flat is None:
            out = np.asarray(self._compute())
            try:
                dtype = np.dtype(self.base.dtype)
            except TypeError:  # a dtype numpy lacks (bfloat16): as the values were read
                dtype = out.dtype
            self._flat = np.ascontiguousarray(out, dtype=dtype).reshape(-1)
        return self._flat

    def elements(self, start: int, stop: int, view: bool = True, checks: list[Callable[[], None]] | None = None) -> np.ndarray:
        return self.flat()[start:stop]

    @property
    def stats(self) -> dict[str, float]:
        if self._stats is None:
            vals = stats_tuple(self.flat(), str(self.flat().dtype))
            self._stats = {k: float(v) for k, v in zip(STAT_FIELDS, vals)}
        return self._stats


ComputedWeight = ComputedView  # a weight (or its gradient) one side computes from others
