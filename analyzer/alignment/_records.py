"""What judging reads of a record (``RecordLike``), and the views that stand in for one
(``RecordView``: a packed tensor's rows, a broadcast, a sum over broadcast axes).

A ``Record`` of a trace is one; so is every view, which takes its metadata (sequence number,
step, kind, module, stack ...) from the record it was made of, named one by one (no attribute
is passed on unnamed), and holds its own shape, values and statistics. Reading a view, like
reading any record of a pair, first asks whether its dtype can be decoded at all
(``decodable``: float8 and unknown names cannot); ``measure`` asks the same.
"""

from __future__ import annotations

import functools
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

import numpy as np

from padiff_trace import Frame, Kind, Phase, Record, UserError
from padiff_trace.arrays import decode, storage_dtype, to_float64

__all__ = ["READ", "RecordLike", "RecordView", "ReshapedView", "TraceLike", "check_decodable", "decodable", "stats_identity", "value_id"]

READ = 1 << 20  # elements per read (4 MB of float32 per side)
_SUM_DIGITS = 9  # significant digits of a summed statistic that tell one value from another
_EXTREMES = frozenset({"min", "max"})


class TraceLike(Protocol):
    """What a record says of the trace it came from: where it is (for messages)."""

    @property
    def path(self) -> Path: ...


class RecordLike(Protocol):
    """What judging and reporting read of a record: a ``Record`` of a trace, or a view of one.

    Metadata (sequence number, step, phase, kind, the module call and position it belongs to,
    dtype, shape, element count, device, whether data is stored), statistics and stack, and
    its values: whole (``read``) or as float64 chunks (``iter_chunks``)."""

    @property
    def trace(self) -> TraceLike: ...
    @property
    def seq(self) -> int: ...
    @property
    def step(self) -> int: ...
    @property
    def phase(self) -> Phase: ...
    @property
    def kind(self) -> Kind: ...
    @property
    def module(self) -> str: ...
    @property
    def module_type(self) -> str: ...
    @property
    def call(self) -> int: ...
    @property
    def parent(self) -> int: ...
    @property
    def call_index(self) -> int: ...
    @property
    def position(self) -> str: ...
    @property
    def dtype(self) -> str: ...
    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def device(self) -> str: ...
    @property
    def numel(self) -> int: ...
    @property
    def has_data(self) -> bool: ...
    @property
    def is_tensor(self) -> bool: ...
    @property
    def name(self) -> str: ...
    @property
    def tensor_name(self) -> str: ...
    @property
    def stats(self) -> dict[str, float]: ...
    @property
    def stack(self) -> tuple[Frame, ...]: ...

    def read(self) -> np.ndarray: ...

    def iter_chunks(self, chunk_elems: int = ...) -> Iterator[np.ndarray]: ...


@functools.cache
def decodable(dtype: str) -> bool:
    """Whether values of this logical dtype can be read as numbers (float8 and unknown names: no)."""
    try:
        stored = np.empty(0, storage_dtype(dtype))
    except TypeError:
        return False
    return to_float64(stored, dtype) is not None


def check_decodable(rec: RecordLike) -> None:
    """Refuse to read a record whose values cannot be decoded (``measure`` reports such pairs
    without reading them)."""
    if not decodable(rec.dtype):
        raise UserError(f"{rec.trace.path}: record {rec.seq} ({rec.name}) has dtype {rec.dtype}, which cannot be compared")


class RecordView(ABC):
    """A record of a trace seen another way, usable wherever a record is (``RecordLike``): the
    metadata of ``base``, its own ``shape`` and ``position``, values (``elements``) and statistics."""

    def __init__(self, base: Record, shape: tuple[int, ...], position: str | None = None) -> None:
        self.base = base
        self.shape: tuple[int, ...] = tuple(shape)
        self.numel = int(np.prod(self.shape, dtype=np.int64))
        self.position = base.position if position is None else position

    @abstractmethod
    def elements(self, start: int, stop: int, view: bool = True, checks: list[Callable[[], None]] | None = None) -> np.ndarray:
        """Elements [start, stop) of the view, flat, decoded but not upcast (see ``_metrics._read``);
        ``view`` and ``checks`` as for ``Trace.read_stored``."""

    @property
    @abstractmethod
    def stats(self) -> dict[str, float]:
        """The view's own statistics (``STAT_FIELDS``)."""

    # ---------------------------------------------------------------- the base record's metadata
    @property
    def trace(self) -> TraceLike:
        return self.base.trace

    @property
    def seq(self) -> int:
        return self.base.seq

    @property
    def step(self) -> int:
        return self.base.step

    @property
    def phase(self) -> Phase:
        return self.base.phase

    @property
    def kind(self) -> Kind:
        return self.base.kind

    @property
    def module(self) -> str:
        return self.base.module

    @property
    def module_type(self) -> str:
        return self.base.module_type

    @property
    def call(self) -> int:
        return self.base.call

    @property
    def parent(self) -> int:
        return self.base.parent

    @property
    def call_index(self) -> int:
        return self.base.call_index

    @property
    def dtype(self) -> str:
        return self.base.dtype

    @property
    def device(self) -> str:
        return self.base.device

    @property
    def has_data(self) -> bool:
        return self.base.has_data

    @property
    def is_tensor(self) -> bool:
        return self.base.is_tensor

    @property
    def stack(self) -> tuple[Frame, ...]:
        return self.base.stack

    @property
    def name(self) -> str:
        """``module#call_index:position``, as a record's (with the view's own position)."""
        mod = self.base.module or "<root>"
        return f"{mod}#{self.base.call_index}:{self.position}" if self.position else f"{mod}#{self.base.call_index}"

    @property
    def tensor_name(self) -> str:
        """``module.position``, as a record's (with the view's own position)."""
        return f"{self.base.module}.{self.position}" if self.base.module else self.position

    # ---------------------------------------------------------------- values
    def read(self) -> np.ndarray:
        """The view's values, shaped (bfloat16 decoded to float32)."""
        check_decodable(self)
        return self.elements(0, self.numel, view=False).reshape(self.shape)

    def iter_chunks(self, chunk_elems: int = READ) -> Iterator[np.ndarray]:
        """Flat float64 chunks of the view's values, in C order."""
        for s in range(0, self.numel, chunk_elems):
            check_decodable(self)
            yield self.elements(s, min(self.numel, s + chunk_elems)).astype(np.float64)


def value_id(r: Record) -> tuple[object, ...] | None:
    """One value's identity within a trace: dtype, size and statistics (None: not a tensor, or
    statistics that overflow). A module's output and the next module's input are one tensor."""
    if not r.is_tensor or r.numel == 0:
        return None
    stats = r.stats
    if not all(math.isfinite(x) for x in stats.values() if isinstance(x, float)):
        return None
    return (r.dtype, r.numel, *stats_identity(stats))


def stats_identity(stats: dict[str, float]) -> tuple[tuple[str, object], ...]:
    """A value's statistics as a key that two records of the same tensor share: the extremes
    exactly (they are elements), the sums (mean, std, l2 ...) to ``_SUM_DIGITS`` significant
    digits. The writer sums a tensor on more than one path (one at a time in C, a batch of small
    ones in numpy): one tensor recorded twice can differ in the last bits of a sum, and an exact
    key would call it two values. NaN (no statistic) is None, equal to itself."""
    out: list[tuple[str, object]] = []
    for k in sorted(stats):
        v: object = stats[k]
        if isinstance(v, float):
            if v != v:
                v = None
            elif k not in _EXTREMES and math.isfinite(v) and v != 0.0:
                v = float(f"{v:.{_SUM_DIGITS}g}")
        out.append((k, v))
    return tuple(out)


class ReshapedView(RecordView):
    """A record seen in another shape with the same elements in the same order (``[2, 12, 32]``
    as ``[2, 12, 4, 8]``: heads split), so that an axis permutation can apply to the split axes."""

    def __init__(self, base: Record, shape: tuple[int, ...]) -> None:
        super().__init__(base, shape)
        if self.numel != base.numel:
            raise ValueError(f"cannot view {list(base.shape)} as {list(shape)}")

    def elements(self, start: int, stop: int, view: bool = True, checks: list[Callable[[], None]] | None = None) -> np.ndarray:
        return decode(self.base.trace.read_stored(self.base, start, stop, view=view, checks=checks), self.base.dtype)

    @property
    def stats(self) -> dict[str, float]:
        return self.base.stats
