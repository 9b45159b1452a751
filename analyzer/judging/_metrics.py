"""Measuring one pair: its records read in pieces (threads for large tensors), the pieces'
sums accumulated (``_accumulate``), the metrics derived (``_metric_table``); the verdict
comes from ``_tolerance``. Also a view a reconciled pair may hold: ``BroadcastView`` (another
one, ``RowSlice``, a packed tensor's rows, comes from weight pairing: ``_slices``).

Side B is the reference: relative quantities divide by |b|. A pair whose dtype cannot be
decoded (float8, or a dtype this version does not know) is not measured: its metrics say
why (``Metrics.uncomparable``) and the comparison goes on.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from padiff_trace import STAT_FIELDS, Record
from padiff_trace.arrays import decode, stats_tuple, transposed_rows

from ..alignment._records import READ, RecordLike, RecordView, ReshapedView, check_decodable, decodable
from ._accumulate import BLOCK, Accumulator
from ._metric_table import Metrics, empty_values
from ._tolerance import DEFAULT_TOLERANCES, MODES, Tolerance, tolerance_for, verdict

__all__ = ["MODES", "BroadcastView", "ReshapedView", "broadcast_shape", "Tolerance", "DEFAULT_TOLERANCES", "tolerance_for",
           "Metrics", "measure", "uncomparable", "verdict", "worker_pool"]

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
    a: RecordLike, b: RecordLike, tol: Tolerance, perm: tuple[int, ...] | None = None,
    pool: ThreadPoolExecutor | None = None,
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
    piece = min(READ, -(-n // (workers * BLOCK)) * BLOCK) if workers > 1 else READ
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


class BroadcastView(RecordView):
    """A record broadcast to a larger shape (an attention mask ``[2, 1, 1, S]`` against
    ``[2, 1, S, S]``, position ids ``[1, S]`` against ``[2, S]``), materialised once; usable
    wherever a record is."""

    LIMIT = 1 << 26  # elements: larger broadcasts stay a shape mismatch

    def __init__(self, base: Record, shape: tuple[int, ...]) -> None:
        super().__init__(base, shape)
        self._flat: np.ndarray | None = None
        self._stats: dict[str, float] | None = None

    def elements(self, start: int, stop: int, view: bool = True, checks: list[Callable[[], None]] | None = None) -> np.ndarray:
        """Elements [start, stop) of the broadcast values, flat (materialised once)."""
        return self.flat()[start:stop]

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


def uncomparable(a: RecordLike, b: RecordLike) -> str:
    """Why a pair cannot be compared (a dtype whose values cannot be decoded), or ''."""
    for side, r in (("A", a), ("B", b)):
        if not decodable(r.dtype):
            return f"{side} {r.name} has dtype {r.dtype}, whose values cannot be decoded"
    return ""


def _read(
    rec: RecordLike, start: int, stop: int, view: bool = True, checks: list[Callable[[], None]] | None = None,
) -> np.ndarray:
    """Elements [start, stop) of a record, flat, decoded but not upcast (bfloat16 -> float32);
    with ``view``, possibly a read-only view of the file. ``checks``: the bytes' verification may
    be left there, to be run before anything computed from them is used (``Trace.read_stored``).
    A view reads its own elements; a record-like of another kind, its values whole."""
    check_decodable(rec)
    if isinstance(rec, RecordView):
        return rec.elements(start, stop, view=view, checks=checks)
    if isinstance(rec, Record):
        return decode(rec.trace.read_stored(rec, start, stop, view=view, checks=checks), rec.dtype)
    return np.asarray(rec.read()).reshape(-1)[start:stop]


_Reader = Callable[[int, int, list[Callable[[], None]]], np.ndarray]


def _measure_stats(a: RecordLike, b: RecordLike) -> Metrics:
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
