"""Measuring one pair: its records read in pieces (threads for large tensors), the pieces'
sums accumulated (``_accumulate``), the metrics derived (``_metric_table``); the verdict
comes from ``_tolerance``. Also the record adapters a pair may hold: ``RowSlice`` (a packed
tensor's rows) and ``BroadcastView``.

Side B is the reference: relative quantities divide by |b|. A pair whose dtype cannot be
decoded (float8, or a dtype this version does not know) is not measured: its metrics say
why (``Metrics.uncomparable``) and the comparison goes on.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from padiff_trace import STAT_FIELDS, Record, UserError
from padiff_trace.arrays import decode, stats_tuple, storage_dtype, to_float64, transposed_rows

from ._accumulate import BLOCK, Accumulator
from ._metric_table import Metrics, empty_values
from ._tolerance import DEFAULT_TOLERANCES, MODES, Tolerance, tolerance_for, verdict

__all__ = ["MODES", "BroadcastView", "RowSlice", "broadcast_shape", "Tolerance", "DEFAULT_TOLERANCES", "tolerance_for",
           "Metrics", "measure", "uncomparable", "verdict", "worker_pool"]

_READ = 1 << 20  # elements per read (4 MB of float32 per side)
_PARALLEL = 1 << 19  # tensors of at least this many elements are read and measured by _WORKERS threads
_WORKERS = 2


def _tiny(dtype: str) -> float:
    try:
        return float(np.finfo(np.dtype(dtype)).tiny)
    except TypeError:
        return float(np.finfo(np.float32).tiny)


def worker_pool() -> ThreadPoolExecutor:
    """Threads for ``measure`` to share across many pairs (starting two threads per pair costs
    ~0.5 ms, as much as measuring a 1 MB pair)."""
    return ThreadPoolExecutor(_WORKERS, thread_name_prefix="padiff-metrics")


def measure(
    a: Record, b: Record, tol: Tolerance, perm: tuple[int, ...] | None = None, pool: ThreadPoolExecutor | None = None
) -> Metrics:
    """Metrics of A vs B; ``perm`` permutes A's axes into B's layout (reads A whole, in its stored dtype).
    Large pairs are measured on ``pool`` (from ``worker_pool()``), or on threads started for this call."""
    why = uncomparable(a, b)
    if why:
        return Metrics(stats_only=True, uncomparable=why)
    if not (a.has_data and b.has_data):
        return _measure_stats(a, b)
    tiny = _tiny(b.dtype if b.dtype in ("float16", "float64") else "float32")
    n = min(a.numel, b.numel)
    workers = _WORKERS if n >= _PARALLEL else 1
    piece = min(_READ, -(-n // (workers * BLOCK)) * BLOCK) if workers > 1 else _READ
    if perm is not None:
        at = np.transpose(_read(a, 0, a.numel).reshape(a.shape), perm)  # a view: no copy
        row = int(np.prod(at.shape[1:], dtype=np.int64)) if at.ndim > 1 else 1
        rows = max(1, piece // max(row, 1))
        piece = rows * row
        if at.ndim == 2 and perm == (1, 0):  # a Linear weight: a cache-friendly tiled transpose
            src = at.T
            get_a: _Reader = lambda s, e, _: transposed_rows(src, s // row, e // row).reshape(-1)  # noqa: E731
        else:
            get_a = lambda s, e, _: np.ascontiguousarray(at[s // row : e // row]).reshape(-1)  # noqa: E731
    else:
        get_a = lambda s, e, checks: _read(a, s, e, checks=checks)  # noqa: E731
    get_b: _Reader = lambda s, e, checks: _read(b, s, e, checks=checks)  # noqa: E731
    tasks = [(s, min(n, s + piece)) for s in range(0, n, piece)] or [(0, 0)]
    accs = [Accumulator(tol, tiny, dtypes=(a.dtype, b.dtype)) for _ in range(workers)]

    def work(k: int) -> None:
        # worker k takes tasks k, k + workers, ... in order: the summation order never depends on
        # timing. Each reads its own pieces (the pread path releases the GIL), so reading and
        # measuring overlap on all cores; a worker holds one piece pair at a time. The CRC-32
        # tests of a piece pair run right after the kernel consumed it (it is in the CPU cache
        # then): a failing one raises before any sum of it reaches a result (and before an
        # error the kernel may have raised on damaged bytes).
        for s, e in tasks[k::workers]:
            checks: list[Callable[[], None]] = []
            try:
                accs[k].add(get_a(s, e, checks), get_b(s, e, checks), s)
            finally:
                for check in checks:
                    check()

    if workers == 1:
        work(0)
    elif pool is not None:
        for f in [pool.submit(work, k) for k in range(workers)]:
            f.result()
    else:
        with worker_pool() as own:
            for f in [own.submit(work, k) for k in range(workers)]:
                f.result()
    acc = accs[0]
    for other in accs[1:]:
        acc.merge(other)
    return acc.result(b.shape)


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

    def read(self) -> np.ndarray:
        return _read(self, 0, self.numel, view=False).reshape(self.shape)

    def iter_chunks(self, chunk_elems: int = _READ) -> Iterator[np.ndarray]:
        for s in range(0, self.numel, chunk_elems):
            yield _read(self, s, min(self.numel, s + chunk_elems)).astype(np.float64)

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


class BroadcastView:
    """A record broadcast to a larger shape (an attention mask ``[2, 1, 1, S]`` against
    ``[2, 1, S, S]``, position ids ``[1, S]`` against ``[2, S]``), materialised once; usable
    wherever a Record is."""

    LIMIT = 1 << 26  # elements: larger broadcasts stay a shape mismatch

    def __init__(self, base: Record, shape: tuple[int, ...]) -> None:
        self.base, self.shape = base, tuple(shape)
        self.numel = int(np.prod(self.shape, dtype=np.int64))
        self._flat: np.ndarray | None = None
        self._stats: dict[str, float] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)

    def flat(self) -> np.ndarray:
        if self._flat is None:
            full = decode(self.base.trace.read_stored(self.base, 0, self.base.numel), self.base.dtype)
            self._flat = np.ascontiguousarray(np.broadcast_to(full.reshape(self.base.shape), self.shape)).reshape(-1)
        return self._flat

    @property
    def stats(self) -> dict[str, float]:
        if self._stats is None:
            vals = stats_tuple(self.flat(), str(self.flat().dtype))
            self._stats = {k: float(v) for k, v in zip(STAT_FIELDS, vals)}
        return self._stats


def broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """The common shape two tensor shapes broadcast to (numpy rules), or None."""
    try:
        shape = tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None
    return shape if int(np.prod(shape, dtype=np.int64)) <= BroadcastView.LIMIT else None


def uncomparable(a: Record, b: Record) -> str:
    """Why a pair cannot be compared (a dtype whose values cannot be decoded), or ''."""
    for side, r in (("A", a), ("B", b)):
        if not _decodable(r.dtype):
            return f"{side} {r.name} has dtype {r.dtype}, whose values cannot be decoded"
    return ""


@functools.cache
def _decodable(dtype: str) -> bool:
    """Whether values of this logical dtype can be read as numbers (float8 and unknown names: no)."""
    try:
        stored = np.empty(0, storage_dtype(dtype))
    except TypeError:
        return False
    return to_float64(stored, dtype) is not None


def _read(
    rec: Record | RowSlice | BroadcastView, start: int, stop: int, view: bool = True,
    checks: list[Callable[[], None]] | None = None,
) -> np.ndarray:
    """Elements [start, stop) of a record, flat, decoded but not upcast (bfloat16 -> float32);
    with ``view``, possibly a read-only view of the file. ``checks``: the bytes' verification may
    be left there, to be run before anything computed from them is used (``Trace.read_stored``)."""
    if not _decodable(rec.dtype):  # measure() reports such pairs without reading them
        raise UserError(f"{rec.trace.path}: record {rec.seq} ({rec.name}) has dtype {rec.dtype}, which cannot be compared")
    if isinstance(rec, BroadcastView):
        return rec.flat()[start:stop]
    if isinstance(rec, RowSlice):
        if rec.perm is not None:
            return rec.canonical_rows()[start:stop]
        off = rec.lo * rec.row_elems
        return decode(rec.trace.read_stored(rec.base, off + start, off + stop, view=view, checks=checks), rec.dtype)
    return decode(rec.trace.read_stored(rec, start, stop, view=view, checks=checks), rec.dtype)


_Reader = Callable[[int, int, list[Callable[[], None]]], np.ndarray]


def _measure_stats(a: Record, b: Record) -> Metrics:
    sa, sb = a.stats, b.stats
    extra = {k: abs(sa[k] - sb[k]) for k in ("min", "max", "mean", "std", "mean_abs", "l2")}
    dl2 = extra["l2"]
    values = empty_values()  # what the statistics cannot tell keeps its no-elements value
    values.update(
        n=b.numel,
        max_abs=max(extra["min"], extra["max"]),
        mean_abs=extra["mean_abs"],
        rel_l2=dl2 / sb["l2"] if sb["l2"] > 0 else (0.0 if dl2 == 0 else math.inf),
        cosine=math.nan,
        mean_abs_b=sb["mean_abs"],
        norm_b=sb["l2"],
        nan_a=int(sa["nan"]),
        nan_b=int(sb["nan"]),
        inf_a=int(sa["inf"]),
        inf_b=int(sb["inf"]),
        nan_mismatch=int(abs(sa["nan"] - sb["nan"])),
        inf_mismatch=int(abs(sa["inf"] - sb["inf"])),
    )
    return Metrics(values, stats_only=True, extra=extra)
