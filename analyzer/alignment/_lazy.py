"""Records of a view kept as row numbers and built on access.

A ``Record`` object costs ~220 bytes with its integers; a view of a million-record trace
that held one per record took ~450 bytes a record. The views keep row numbers instead (a
numpy array shared by every call, or a dict of keys to rows) and build a ``Record`` from
the trace's index when one is asked for (~2 us). Records compare equal by trace and row, so
two builds of one record are interchangeable. A call keeps only its place in the view's
``CallColumns`` (its fields are columns there), its module names, and its position.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar

import numpy as np

from padiff_trace import Record, Trace

__all__ = ["CallColumns", "CallIndex", "RecordMap"]

K = TypeVar("K")
_INT32 = np.iinfo(np.int32)
C = TypeVar("C")


class CallColumns:
    """The calls of one view as columns (``array`` of machine ints: ~40 bytes a call where a
    call object with its fields took ~200), and their records' rows in the trace, grouped by
    call (inputs, then outputs). A view built by hand keeps its records' lists in ``own``."""

    __slots__ = ("call_index", "depth", "id", "lo", "n_in", "n_out", "own", "parent", "rows", "step", "trace")

    def __init__(self, trace: Trace | None, rows: np.ndarray) -> None:
        self.trace, self.rows = trace, rows
        self.id, self.parent, self.lo = array("q"), array("q"), array("q")
        self.step, self.call_index, self.depth, self.n_in, self.n_out = (array("i") for _ in range(5))
        self.own: list[tuple[list[Record], list[Record]]] | None = None

    @classmethod
    def of(cls, trace: Trace, rows: np.ndarray, **columns: np.ndarray) -> CallColumns:
        """Columns from numpy arrays of one length (id, parent, lo, step, call_index, n_in, n_out)."""
        c = cls(trace, rows)
        for name, values in columns.items():
            col: array[int] = getattr(c, name)
            if col.typecode == "q" and (not len(values) or _INT32.min < int(values.min()) <= int(values.max()) < _INT32.max):
                col = array("i")  # ids and positions that fit: 4 bytes each, not 8
                setattr(c, name, col)
            col.frombytes(np.ascontiguousarray(values, dtype=np.int64 if col.typecode == "q" else np.int32).tobytes())
        c.depth.frombytes(bytes(4 * len(c.id)))
        return c

    @classmethod
    def single(cls, id: int, step: int, parent: int, call_index: int, inputs: list[Record], outputs: list[Record]) -> CallColumns:
        """One call whose records are given (a view built by hand)."""
        c = cls(None, np.zeros(0, np.int64))
        for col, v in ((c.id, id), (c.parent, parent), (c.lo, 0), (c.step, step), (c.call_index, call_index), (c.depth, 0),
                       (c.n_in, len(inputs)), (c.n_out, len(outputs))):
            col.append(v)
        c.own = [(inputs, outputs)]
        return c

    def inputs(self, k: int) -> list[Record]:
        if self.own is not None:
            return self.own[k][0]
        lo = self.lo[k]
        return self._records(lo, lo + self.n_in[k])

    def outputs(self, k: int) -> list[Record]:
        if self.own is not None:
            return self.own[k][1]
        lo = self.lo[k] + self.n_in[k]
        return self._records(lo, lo + self.n_out[k])

    def _records(self, lo: int, hi: int) -> list[Record]:
        assert self.trace is not None
        at = self.trace.record_at
        return [at(i) for i in self.rows[lo:hi].tolist()]


class CallIndex(Mapping[int, "C"], Generic[C]):
    """``call id -> call`` over the ids in ascending order (``array``) and the calls in the same
    order: a binary search (~1 us) where a dict took ~70 bytes a call."""

    __slots__ = ("_calls", "_ids")

    def __init__(self, ids: array[int], calls: list[C]) -> None:
        self._ids, self._calls = ids, calls

    def __getitem__(self, key: int) -> C:
        i = bisect_left(self._ids, key)
        if i < len(self._ids) and self._ids[i] == key:
            return self._calls[i]
        raise KeyError(key)

    def get(self, key: int, default: C | None = None) -> C | None:  # type: ignore[override]
        i = bisect_left(self._ids, key)
        return self._calls[i] if i < len(self._ids) and self._ids[i] == key else default

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, int):
            return False
        i = bisect_left(self._ids, key)
        return i < len(self._ids) and self._ids[i] == key

    def __iter__(self) -> Iterator[int]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)


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
