"""A record of a trace: its metadata, held; its data, statistics and stack, asked of the
trace it came from (``RecordSource``) on demand."""

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

__all__ = ["Record", "RecordSource"]


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

    @property
    def tensor_name(self) -> str:
        """A weight's (parameter's, buffer's) dotted name in its model: ``module.position``, or the
        position alone for a tensor of the root module (``cls_token``)."""
        return f"{self.module}.{self.position}" if self.module else self.position

    def read(self) -> np.ndarray:
        """The tensor (bfloat16 decoded to float32, bool as bool), shaped."""
        return self.trace.read(self.seq)

    def iter_chunks(self, chunk_elems: int = CHUNK_ELEMS) -> Iterator[np.ndarray]:
        """Flat float64 (complex128 for complex) chunks of the tensor, in C order."""
        return self.trace.iter_chunks(self.seq, chunk_elems)
