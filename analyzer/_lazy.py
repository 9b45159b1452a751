"""Records of a view kept as row numbers and built on access.

A ``Record`` object costs ~220 bytes with its integers; a view of a million-record trace
that held one per record took ~450 bytes a record. The views keep row numbers instead (a
numpy array shared by every call, or a dict of keys to rows) and build a ``Record`` from
the trace's index when one is asked for (~2 us). Records compare equal by trace and row, so
two builds of one record are interchangeable.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar

import numpy as np

from padiff_trace import Record, Trace

__all__ = ["CallRows", "RecordMap"]

K = TypeVar("K")


class CallRows:
    """The trace rows of every call of a view, grouped by call (inputs, then outputs)."""

    __slots__ = ("rows", "trace")

    def __init__(self, trace: Trace, rows: np.ndarray) -> None:
        self.trace = trace
        self.rows = rows

    def records(self, lo: int, hi: int) -> list[Record]:
        at = self.trace.record_at
        return [at(i) for i in self.rows[lo:hi].tolist()]


class RecordMap(Mapping[K, Record], Generic[K]):
    """``key -> Record`` over ``key -> row``: records built on lookup."""

    __slots__ = ("_rows", "_trace")

    def __init__(self, trace: Trace, rows: dict[K, int]) -> None:
        self._trace = trace
        self._rows = rows

    def __getitem__(self, key: K) -> Record:
        return self._trace.record_at(self._rows[key])

    def get(self, key: K, default: Record | None = None) -> Record | None:  # type: ignore[override]
        row = self._rows.get(key)
        return default if row is None else self._trace.record_at(row)

    def __contains__(self, key: object) -> bool:
        return key in self._rows

    def __iter__(self) -> Iterator[K]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __repr__(self) -> str:
        return f"RecordMap({len(self._rows)} records of {self._trace.path})"
