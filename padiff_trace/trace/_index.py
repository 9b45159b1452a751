"""The index of an opened trace: its merged record table, and the one place a row becomes a
``Record``.

The table is the structured array the shards' ``/records`` datasets merge into (string
columns hold ids into ``strings``); ``SeqIndex`` finds a sequence number's row without a
per-record dict; ``TraceIndex.record_at`` and ``records`` build ``Record`` objects on demand
through the same function (one by one, or from columns converted a block at a time).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ._header import Frame, stack_from_json
from ._record import Record, RecordSource
from ._schema import DataLoc, Kind, Phase
from ._shardindex import parse_shape

__all__ = ["SeqIndex", "TraceIndex"]

_RECORD_COLUMNS = (
    "seq", "step", "phase", "kind", "call", "parent", "call_index", "module", "module_type", "position",
    "dtype", "shape", "device", "numel", "data_loc",
)
_DATA_COLUMNS = ("data_loc", "offset", "numel", "dtype", "shape", "nbytes")
_PHASES = {int(p): p for p in Phase}
_KINDS = {int(k): k for k in Kind}
_NONE = int(DataLoc.NONE)


class SeqIndex:
    """Sequence number -> row: arithmetic where the rows hold consecutive numbers (a trace
    read whole), a binary search where they are sorted (as the merge leaves them; no
    per-record dict), a dict otherwise."""

    def __init__(self, seqs: np.ndarray) -> None:
        n = len(seqs)
        self._first = int(seqs[0]) if n else 0
        self._n = n
        self._seqs: np.ndarray | None = None
        self._dict: dict[int, int] | None = None
        if n and int(seqs[-1]) - self._first == n - 1 and bool(np.all(np.diff(seqs) == 1)):
            return  # consecutive: row = seq - first
        self._seqs = np.ascontiguousarray(seqs)  # a field of the index is strided: searchsorted would copy it
        if not (n < 2 or np.all(self._seqs[1:] > self._seqs[:-1])):
            self._dict = {int(x): i for i, x in enumerate(self._seqs.tolist())}
            self._seqs = None

    def __getitem__(self, seq: int) -> int:
        if self._dict is not None:
            return self._dict[seq]
        if self._seqs is None:
            i = seq - self._first
            if 0 <= i < self._n:
                return i
            raise KeyError(seq)
        i = int(np.searchsorted(self._seqs, seq))
        if i < len(self._seqs) and self._seqs[i] == seq:
            return i
        raise KeyError(seq)

    def __contains__(self, seq: int) -> bool:
        try:
            self[seq]
        except KeyError:
            return False
        return True


class TraceIndex:
    """The merged record table: ``rows`` (structured, by row), ``shard_of`` (the shard file
    each row came from), ``strings`` (the string table the id columns point into)."""

    def __init__(self, rows: np.ndarray, shard_of: np.ndarray, strings: list[str]) -> None:
        self.rows = rows
        self.shard_of = shard_of
        self.strings = strings
        self.seqs = SeqIndex(rows["seq"])
        fields = {name: k for k, name in enumerate(rows.dtype.names or ())}
        self._record_fields = tuple(fields[c] for c in _RECORD_COLUMNS)
        self._data_fields = tuple(fields[c] for c in _DATA_COLUMNS)
        self._shapes: dict[int, tuple[int, ...]] = {}
        self._stacks: dict[int, tuple[Frame, ...]] = {}

    def __len__(self) -> int:
        return len(self.rows)

    def row(self, seq: int) -> int:
        """The row holding sequence number ``seq`` (``KeyError`` when none does)."""
        return self.seqs[int(seq)]

    def seq_at(self, row: int) -> int:
        return int(self.rows["seq"][row])

    # ------------------------------------------------------------------ records
    def record_at(self, source: RecordSource, row: int) -> Record:
        """The ``Record`` of row ``row``, reading its data through ``source``."""
        values = self.rows[row].item()
        return self._build(source, row, tuple(values[k] for k in self._record_fields))

    def records(self, source: RecordSource, block: int = 1 << 16) -> Iterator[Record]:
        """Every row's ``Record`` in order; the columns are converted to Python values a block
        at a time (a cache of them all would hold ~200 bytes per record for the trace's life)."""
        rows, build = self.rows, self._build
        for lo in range(0, len(rows), block):
            part = rows[lo : lo + block]
            for i, values in enumerate(zip(*(part[c].tolist() for c in _RECORD_COLUMNS)), lo):
                yield build(source, i, values)

    def _build(self, source: RecordSource, row: int, values: tuple[Any, ...]) -> Record:
        seq, step, phase, kind, call, parent, call_index, module, mtype, pos, dtype, shape_id, dev, numel, loc = values
        s = self.strings
        return Record(
            source, row, seq, step, _PHASES[phase], _KINDS[kind], s[module], s[mtype], call, parent, call_index,
            s[pos], s[dtype], self.shape(shape_id), s[dev], numel, loc != _NONE,
        )

    # ------------------------------------------------------------------ columns
    def shape(self, shape_id: int) -> tuple[int, ...]:
        """The shape stored as string ``shape_id`` (parsed once)."""
        shape = self._shapes.get(shape_id)
        if shape is None:
            shape = self._shapes[shape_id] = parse_shape(self.strings[shape_id]) or ()
        return shape

    def stack(self, row: int) -> tuple[Frame, ...] | None:
        """The call stack of row ``row``; None when its string is not a list of frames."""
        sid = int(self.rows["stack"][row])
        st = self._stacks.get(sid)
        if st is None:
            try:
                st = stack_from_json(self.strings[sid])
            except (ValueError, TypeError, IndexError, KeyError):
                return None
            self._stacks[sid] = st
        return st

    def data_row(self, row: int) -> list[int]:
        """(data_loc, offset, numel, dtype, shape, shard, nbytes) of row ``row`` as Python ints
        (the hot path of every read; ~1 us, no second copy of the columns)."""
        values = self.rows[row].item()
        loc, off, numel, dtype, shape, nbytes = (values[k] for k in self._data_fields)
        return [loc, off, numel, dtype, shape, int(self.shard_of[row]), nbytes]

    def storage_key(self, row: int) -> tuple[int, int, int, int]:
        """(shard, location, offset, bytes) of row ``row``: equal keys, the same stored bytes."""
        r = self.rows[row]
        return int(self.shard_of[row]), int(r["data_loc"]), int(r["offset"]), int(r["nbytes"])
