"""A packed tensor's share, usable wherever a record is (a ``RecordView``): what weight pairing
hands a pair when one side keeps several tensors in one (torch MHA's ``in_proj_weight``, a
fused q|k|v).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from padiff_trace import STAT_FIELDS, Record
from padiff_trace.arrays import decode, stats_tuple

from ._records import RecordView

__all__ = ["RowSlice"]


class RowSlice(RecordView):
    """Rows ``[lo, hi)`` of a record (a packed tensor's share: torch MHA's ``in_proj_*``, a fused
    q|k|v), usable wherever a record is.

    Without ``perm`` the rows are those of the stored tensor and only they are read. With
    ``perm`` (stored -> canonical layout, e.g. transformers' ``Conv1D`` stores ``[in, out]``)
    the rows are the canonical tensor's: the record is read whole once and the share kept.
    Keeps the packed record's sequence number, step and stack; ``position`` names the rows
    (``in_proj_weight[0:16]``); statistics are the rows' own.
    """

    def __init__(self, base: Record, lo: int, hi: int, perm: tuple[int, ...] | None = None) -> None:
        canon = tuple(base.shape[k] for k in perm) if perm is not None else tuple(base.shape)
        position = f"{base.position}[{lo}:{hi}]" if perm is None else f"{base.position}.T[{lo}:{hi}]"
        super().__init__(base, (hi - lo,) + canon[1:], position)
        self.lo, self.hi, self.perm = lo, hi, perm
        self.row_elems = int(np.prod(canon[1:], dtype=np.int64))
        self._stats: dict[str, float] | None = None
        self._rows: np.ndarray | None = None

    def canonical_rows(self) -> np.ndarray:
        """The share, flat, decoded (``perm`` slices only: materialised once)."""
        if self._rows is None:
            full = decode(self.base.trace.read_stored(self.base, 0, self.base.numel), self.base.dtype)
            canon = np.transpose(full.reshape(self.base.shape), self.perm)
            self._rows = np.ascontiguousarray(canon[self.lo : self.hi]).reshape(-1)
        return self._rows

    def elements(self, start: int, stop: int, view: bool = True, checks: list[Callable[[], None]] | None = None) -> np.ndarray:
        """Elements [start, stop) of the share, flat, decoded but not upcast (see ``_metrics._read``)."""
        if self.perm is not None:
            return self.canonical_rows()[start:stop]
        off = self.lo * self.row_elems
        return decode(self.base.trace.read_stored(self.base, off + start, off + stop, view=view, checks=checks), self.dtype)

    @property
    def stats(self) -> dict[str, float]:
        if self._stats is None:
            if self.perm is not None:
                rows = self.canonical_rows()
                vals = stats_tuple(rows, str(rows.dtype))
            else:
                stored = self.base.trace.read_stored(self.base, self.lo * self.row_elems, self.hi * self.row_elems)
                vals = stats_tuple(stored, self.base.dtype)
            self._stats = {k: float(v) for k, v in zip(STAT_FIELDS, vals)}
        return self._stats

    def __repr__(self) -> str:
        return f"RowSlice({self.name}, rows {self.lo}:{self.hi} of {list(self.base.shape)})"
