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

__all__ = ["ComputedWeight"]


class ComputedWeight(RecordView):
    """The values ``compute()`` returns, in ``base``'s shape and dtype, with ``base``'s metadata
    (its sequence number, step, module) and a position that says what was computed."""

    def __init__(self, base: Record, compute: Callable[[], np.ndarray], what: str) -> None:
        super().__init__(base, tuple(base.shape), f"{base.position} ({what})")
        self._compute = compute
        self._flat: np.ndarray | None = None
        self._stats: dict[str, float] | None = None

    def flat(self) -> np.ndarray:
        if self._flat is None:
            self._flat = np.ascontiguousarray(self._compute(), dtype=np.dtype(self.base.dtype)).reshape(-1)
        return self._flat

    def elements(self, start: int, stop: int, view: bool = True, checks: list[Callable[[], None]] | None = None) -> np.ndarray:
        return self.flat()[start:stop]

    @property
    def stats(self) -> dict[str, float]:
        if self._stats is None:
            vals = stats_tuple(self.flat(), str(self.flat().dtype))
            self._stats = {k: float(v) for k, v in zip(STAT_FIELDS, vals)}
        return self._stats
