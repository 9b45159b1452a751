"""A packed tensor's share, usable wherever a Record is: what weight pairing hands a pair when
one side keeps several tensors in one (torch MHA's ``in_proj_weight``, a fused q|k|v).

Reading a share, like reading any record of a pair, first asks whether its dtype can be
decoded at all (``decodable``: float8 and unknown names cannot); ``_metrics`` asks the same.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from padiff_trace import STAT_FIELDS, Record, UserError
from padiff_trace.arrays import decode, stats_tuple, storage_dtype, to_float64

__all__ = ["READ", "RowSlice", "check_decodable", "decodable"]

READ = 1 << 20  # elements per read (4 MB of float32 per side)


@functools.cache
def decodable(dtype: str) -> bool:
    """Whether values of this logical dtype can be read as numbers (float8 and unknown names: no)."""
    try:
        stored = np.empty(0, storage_dtype(dtype))
    except TypeError:
        return False
    return to_float64(stored, dtype) is not None


def check_decodable(rec: Any) -> None:
    """Refuse to read a record whose values cannot be decoded (``measure`` reports such pairs
    without reading them)."""
    if not decodable(rec.dtype):
        raise UserError(f"{rec.trace.path}: record {rec.seq} ({rec.name}) has dtype {rec.dtype}, which cannot be compared")


class RowSlice:
    """Rows ``[lo, hi)`` of a record (a packed tensor's share: torch MHA's ``in_proj_*``, a fused
    q|k|v), usable wherever a Record is.

    Without ``perm`` the rows are those of the stored tensor and only they are read. With
    ``perm`` (stored -> canonical layout, e.g. transformers' ``Conv1D`` stores ``[in, out]``)
    the rows are the canonical tensor's: the record is read whole once and the share kept.
    Keeps the packed record's sequence number, step and stack; ``position`` names the rows
    (``in_proj_weight[0:16]``); statistics are the rows' own.
    """

    def __init__(self, base: Record, lo: int, hi: int, perm: tuple[int, ...] | None = None) -> None:
        self.base, self.lo, self.hi, self.perm = base, lo, hi, perm
        canon = tuple(base.shape[k] for k in perm) if perm is not None else tuple(base.shape)
        self.shape: tuple[int, ...] = (hi - lo,) + canon[1:]
        self.numel = int(np.prod(self.shape, dtype=np.int64))
        self.row_elems = int(np.prod(canon[1:], dtype=np.int64))
        self.position = f"{base.position}[{lo}:{hi}]" if perm is None else f"{base.position}.T[{lo}:{hi}]"
        self._stats: dict[str, float] | None = None
        self._rows: np.ndarray | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)

    @property
    def name(self) -> str:
        mod = self.base.module or "<root>"
        return f"{mod}#{self.base.call_index}:{self.position}"

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
        return decode(self.trace.read_stored(self.base, off + start, off + stop, view=view, checks=checks), self.dtype)

    def read(self) -> np.ndarray:
        check_decodable(self)
        return self.elements(0, self.numel, view=False).reshape(self.shape)

    def iter_chunks(self, chunk_elems: int = READ) -> Iterator[np.ndarray]:
        for s in range(0, self.numel, chunk_elems):
            check_decodable(self)
            yield self.elements(s, min(self.numel, s + chunk_elems)).astype(np.float64)

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
