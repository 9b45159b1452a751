"""A record of a trace (its metadata; data read on demand) and the index from sequence
number to row."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from ..arrays._stats import CHUNK_ELEMS
from ._header import Frame
from ._integrity import Damage
from ._schema import STAT_FIELDS, Kind, Phase

__all__ = ["Record", "RecordSource", "SeqIndex"]


class RecordSource(Protocol):
    """What a ``Record`` asks of the trace it came from (``Trace`` is one): the record's own
    metadata is held by the record, everything else is read on demand."""

    path: Path

    def stats_at(self, row: int) -> np.ndarray: ...

    def stack_at(self, row: int) -> tuple[Frame, ...]: ...

    def damage_of(self, seq: int) -> Damage | None: ...

    def read(self, seq: int) -> np.ndarray: ...

    def iter_chunks(self, seq: int, chunk_elems: int = CHUNK_ELEMS) -> Iterator[np.ndarray]: ...

    def read_stored(
        self, rec: Record, start: int = 0, stop: int | None = None, *, view: bool = False,
        checks: list[Callable[[], None]] | None = None,
    ) -> np.ndarray: ...

    def storage_key(self, rec: Record) -> tuple[int, int, int, int]: ...


@dataclass(slots=True, eq=False)
class Record:
    """Metadata of one record; tensor data is read on demand. Read-only by convention (not
    frozen: a frozen dataclass takes 5 us to build, and listing builds one per record).
    Equal when they are the same row of the same opened ``Trace``."""

    trace: RecordSource = field(repr=False)
    row: int = field(repr=False)  # row in the trace's index
    seq: int
    step: int
    phase: Phase
    kind: Kind
    module: str
    module_type: str
    call: int
    parent: int
    call_index: int
    position: str
    dtype: str
    shape: tuple[int, ...]
    device: str
    numel: int
    has_data: bool

    def __eq__(self, other: object) -> bool:
        # records are built on demand: two builds of one row of one opened trace are one record
        return isinstance(other, Record) and other.trace is self.trace and other.row == self.row

    def __hash__(self) -> int:
        return hash((id(self.trace), self.row))

    @property
    def stats(self) -> dict[str, float]:
        vals = self.trace.stats_at(self.row).tolist()
        return {k: float(v) for k, v in zip(STAT_FIELDS, vals)}

    @property
    def stack(self) -> tuple[Frame, ...]:
        return self.trace.stack_at(self.row)

    @property
    def damage(self) -> Damage | None:
        """Why this record's data cannot be read (then ``read`` raises), or None: intact so far."""
        return self.trace.damage_of(self.seq)

    @property
    def is_tensor(self) -> bool:
        return not self.dtype.startswith("py:")

    @property
    def name(self) -> str:
        """``module[call_index]:position`` - a readable identifier."""
        mod = self.module or "<root>"
        return f"{mod}#{self.call_index}:{self.position}" if self.position else f"{mod}#{self.call_index}"

    def read(self) -> np.ndarray:
        """The tensor (bfloat16 decoded to float32, bool as bool), shaped."""
        return self.trace.read(self.seq)

    def iter_chunks(self, chunk_elems: int = CHUNK_ELEMS) -> Iterator[np.ndarray]:
        """Flat float64 (complex128 for complex) chunks of the tensor, in C order."""
        return self.trace.iter_chunks(self.seq, chunk_elems)


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
