"""Streaming trace writer: producers enqueue, one background thread writes shards.

Flush policy: the open shard is closed (and becomes visible and crash-safe) when
it holds ``flush_records`` records, ``flush_bytes`` bytes of tensor data, or is
``flush_seconds`` old, whichever comes first, and on ``close()``. The queue is
bounded by ``queue_bytes``: a producer waits while it is full, nothing is dropped.
"""

from __future__ import annotations

import collections
import json
import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from ._dtypes import dtype_name, to_storage
from ._native import KINDS, kernel
from ._errors import TraceExistsError, TraceWriteError
from ._meta import base_meta
from ._records import Frame, RecordHeader, stack_to_json
from ._schema import FORMAT_VERSION, SHARD_GLOB, STAT_FIELDS, DataLoc, Kind, Phase
from ._shard import BIG_TENSOR_BYTES, ROW, ShardWriter
from ._stats import MANY_MAX_ELEMS, stats_many, stats_tuple

__all__ = ["Deferred", "TraceWriter", "WriterOptions"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Deferred:
    """A tensor whose host copy completes later (e.g. an async device->host copy).

    ``fetch()`` runs on the writer thread and returns the host array.
    """

    nbytes: int
    fetch: Callable[[], np.ndarray]


@dataclass(frozen=True, slots=True)
class Summary:
    """A tensor the producer already summarised (its statistics, in ``STAT_FIELDS`` order),
    appended in place of data: the record keeps statistics only and nothing is copied."""

    numel: int
    stats: tuple[float, ...]
    nbytes: int = 0  # queue accounting: holds no tensor bytes


@dataclass(frozen=True, slots=True)
class WriterOptions:
    flush_records: int = 10_000
    flush_seconds: float = 2.0
    flush_bytes: int = 256 << 20
    queue_bytes: int = 512 << 20
    compression: str | None = None  # None, "gzip" or "lzf"
    stats_only: bool = False
    max_data_bytes: int | None = None  # larger tensors keep statistics only


@dataclass(slots=True)
class _Item:
    seq: int
    header: RecordHeader
    data: np.ndarray | Deferred | Summary | None
    dtype: str | None
    shape: tuple[int, ...] | None
    keep_data: bool
    nbytes: int
    stats: tuple[float, ...] | None = None


_CLOSE = object()
_FLUSH = object()
_NAN_STATS = (float("nan"),) * len(STAT_FIELDS)
_RECENT = 4  # arrays remembered for duplicate detection
_BATCH = 512  # small tensors summarised together
_TAKE = 1024  # records the writer takes off the queue at once
_KIND_LABEL = {k: k.label for k in Kind} | {int(k): k.label for k in Kind}
_LOC_NONE = int(DataLoc.NONE)
_pack = ROW.pack


class TraceWriter:
    """Write a trace directory of shards. Use as a context manager or call ``close()``."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        meta: Mapping[str, Any] | None = None,
        options: WriterOptions | None = None,
        overwrite: bool = False,
    ) -> None:
        self.path = Path(path)
        self.options = options or WriterOptions()
        if self.options.compression not in (None, "gzip", "lzf"):
            raise ValueError(f"unknown compression {self.options.compression!r}; use gzip or lzf")
        self._prepare_dir(overwrite)
        full_meta = base_meta()
        full_meta.update(meta or {})
        full_meta["format_version"] = FORMAT_VERSION
        self.meta = full_meta
        self._meta_json = json.dumps(full_meta, ensure_ascii=False, sort_keys=True, default=str)
        self._lock = threading.Lock()  # entered directly on hot paths (a Condition adds a call)
        self._cond = threading.Condition(self._lock)
        self._queue: collections.deque[Any] = collections.deque()
        self._queued_bytes = 0
        self._idle = False  # the writer thread waits for records
        self._seq = 0
        self._error: BaseException | None = None
        self._closed = False
        self._counts: collections.Counter[int] = collections.Counter()  # by kind
        self._steps: set[int] = set()
        self._shard_index = 0
        self._abort_reason: str | None = None
        self._stack_cache: dict[tuple[Frame, ...], str] = {}
        self._recent: list[tuple[Any, ...]] = []
        self._remember_max = self.options.queue_bytes // 8
        self._keep_any = not self.options.stats_only
        self._max_data = self.options.max_data_bytes
        self._prestats: dict[int, tuple[float, ...]] = {}  # seq -> statistics computed in a batch  # (array, logical, numel, stats, shard, loc, off, nbytes)
        self._shape_cache: dict[tuple[int, ...], str] = {}
        self._summary_c = getattr(kernel(), "summary", None)
        self._batch = self._summary_c is None  # numpy statistics: batch small tensors (the C kernel needs not)
        self._pool: ThreadPoolExecutor | None = None  # statistics of large tensors, beside their write
        self._thread = threading.Thread(target=self._run, name="padiff-trace-writer", daemon=True)
        self._thread.start()

    # ---------------------------------------------------------------- producer side
    def append(
        self,
        header: RecordHeader,
        data: np.ndarray | Deferred | Summary | None,
        *,
        dtype: str | None = None,
        shape: tuple[int, ...] | None = None,
        keep_data: bool = True,
        stats: tuple[float, ...] | None = None,
    ) -> int:
        """Queue one record; returns its sequence number. Blocks while the queue is full.

        ``data`` must not be modified by the caller afterwards. ``dtype`` is the logical
        dtype (needed for bfloat16, whose bits arrive as uint16, and for non-tensors,
        e.g. ``"py:NoneType"`` with ``data=None``). ``stats``: the statistics of ``data``
        when the producer already has them (``STAT_FIELDS`` order); the writer trusts them.
        """
        nbytes = 0 if data is None else data.nbytes
        with self._lock:
            if self._error is not None or self._closed:
                self._raise_if_failed()
                raise TraceWriteError(f"{self.path}: writer is closed")
            queued = self._queued_bytes
            if queued and queued + nbytes > self.options.queue_bytes:
                cap = self.options.queue_bytes
                while self._queued_bytes and self._queued_bytes + nbytes > cap and self._error is None:
                    self._cond.wait()
                self._raise_if_failed()
            seq = self._seq
            self._seq = seq + 1
            self._queue.append(_Item(seq, header, data, dtype, shape, keep_data, nbytes, stats))
            self._queued_bytes += nbytes
            if self._idle:  # the writer sleeps until told
                self._cond.notify_all()
        return seq

    def flush(self) -> None:
        """Ask the writer to finish its current shard once what is queued now is written, so
        that a reader (another process) sees it. Returns at once."""
        with self._lock:
            self._raise_if_failed()
            if not self._closed:
                self._queue.append(_FLUSH)
                self._cond.notify_all()

    def close(self) -> None:
        """Write everything queued, mark the trace complete and stop the thread."""
        with self._lock:
            if self._closed:
                self._raise_if_failed()
                return
            self._closed = True
            self._queue.append(_CLOSE)
            self._cond.notify_all()
        self._thread.join()
        self._raise_if_failed()

    def abort(self, reason: str) -> None:
        """Write what is queued but leave the trace marked incomplete."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._abort_reason = reason
            self._queue.append(_CLOSE)
            self._cond.notify_all()
        self._thread.join()

    @property
    def records_written(self) -> int:
        return self._seq

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort(f"{getattr(exc_type, '__name__', exc_type)}: {exc}")

    def _raise_if_failed(self) -> None:
        if self._error is not None:
            raise TraceWriteError(f"{self.path}: writing the trace failed: {_one_line(self._error)}") from self._error

    def _prepare_dir(self, overwrite: bool) -> None:
        p = self.path
        if p.exists() and not p.is_dir():
            raise TraceExistsError(f"{p}: exists and is not a trace directory")
        existing = sorted(p.glob(SHARD_GLOB)) + sorted(p.glob(SHARD_GLOB + ".part")) if p.exists() else []
        if existing:
            if not overwrite:
                raise TraceExistsError(f"{p}: a trace already exists here (pass overwrite/--force to replace it)")
            for f in existing:  # only our own shard files, never anything else in the directory
                f.unlink()
        try:
            p.mkdir(parents=True, exist_ok=True)
            probe = p / ".padiff-write-test"
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as exc:
            raise TraceWriteError(f"{p}: cannot write the trace here: {exc.strerror or exc}") from exc

    # ---------------------------------------------------------------- writer thread
    def _run(self) -> None:
        try:
            self._loop()
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True)

    def _loop(self) -> None:
        shard: ShardWriter | None = None
        opened = 0.0
        opts = self.options
        done_bytes = 0  # written since the producer was last told
        try:
            while True:
                with self._lock:
                    if done_bytes:
                        self._queued_bytes -= done_bytes
                        done_bytes = 0
                        self._cond.notify_all()
                    while not self._queue:
                        timeout = None if shard is None else max(0.0, opened + opts.flush_seconds - time.monotonic())
                        if timeout == 0.0:
                            break
                        self._idle = True
                        self._cond.wait(timeout)
                        self._idle = False
                    # take what is queued in one go (a lock round trip per record costs as much as writing it)
                    batch = [self._queue.popleft() for _ in range(min(len(self._queue), _TAKE))]
                if not batch:  # flush by age
                    if shard is not None:
                        self._finish(shard)
                        shard = None
                    continue
                for n_done, item in enumerate(batch):
                    if item is _FLUSH:
                        if shard is not None:
                            self._finish(shard)
                            shard = None
                        continue
                    if item is _CLOSE:
                        if shard is None:
                            shard = self._new_shard()
                        final = self._abort_reason is None
                        self._tally(shard)
                        summary = self._summary()
                        if not final:
                            summary["aborted"] = self._abort_reason
                        shard.close(final=final, summary=summary)
                        shard = None
                        return
                    if shard is None:
                        shard = self._new_shard()
                        opened = time.monotonic()
                    if self._batch and item.seq not in self._prestats and _small(item):
                        self._batch_stats(item, batch[n_done + 1 : n_done + 1 + _BATCH])
                    self._write(shard, item)
                    done_bytes += item.nbytes
                    if item.nbytes >= BIG_TENSOR_BYTES or n_done % 64 == 63:  # free queue space early
                        with self._lock:
                            self._queued_bytes -= done_bytes
                            done_bytes = 0
                            self._cond.notify_all()
                    if (
                        shard.n_rows >= opts.flush_records
                        or shard.data_bytes >= opts.flush_bytes
                        or (n_done % 64 == 63 and time.monotonic() - opened >= opts.flush_seconds)
                    ):
                        self._finish(shard)
                        shard = None
                if shard is not None and time.monotonic() - opened >= opts.flush_seconds:
                    self._finish(shard)
                    shard = None
        except BaseException as exc:  # noqa: BLE001 - surfaced to the producer
            logger.debug("writer thread failed", exc_info=True)
            if shard is not None:
                shard.abort()
            with self._lock:
                self._error = exc
                self._queue.clear()
                self._queued_bytes = 0
                self._cond.notify_all()

    def _tally(self, shard: ShardWriter) -> None:
        counts, steps = shard.tally()
        self._counts.update(counts)
        self._steps.update(steps)

    def _finish(self, shard: ShardWriter) -> None:
        """Close a shard that is not the last (it becomes visible to readers)."""
        self._tally(shard)
        shard.close(final=False)

    def _new_shard(self) -> ShardWriter:
        shard = ShardWriter(self.path, self._shard_index, self._meta_json, self.options.compression)
        self._shard_index += 1
        return shard

    def _write(self, shard: ShardWriter, item: _Item) -> None:
        # per-record hot path (100k small records must take seconds): locals, cached string ids
        h = item.header
        arr = item.data
        if type(arr) is Deferred:
            arr = arr.fetch()
        key = (h.module, h.module_type, h.position, h.device, id(h.stack))
        hids = shard.cache.get(key)
        if hids is None:  # the stack is kept alive by the cache entry, so its id stays unique
            intern = shard.intern
            stack_id = intern(self._stack_json(h.stack)) if h.stack else intern("")
            hids = shard.cache[key] = (
                intern(h.module), intern(h.module_type), intern(h.position), intern(h.device), stack_id, h.stack
            )
        if arr is None:
            shape = tuple(item.shape or ())
            logical = item.dtype or "py:NoneType"
            numel, stats, loc, off, nb = 0, _NAN_STATS, _LOC_NONE, 0, 0
        elif type(arr) is Summary:
            shape = tuple(item.shape or ())
            logical = item.dtype or "float32"
            numel, stats, loc, off, nb = arr.numel, arr.stats, _LOC_NONE, 0, 0
        else:
            logical = item.dtype or dtype_name(arr.dtype)
            shape = item.shape if item.shape is not None else arr.shape
            keep = item.keep_data and self._keep_any
            if keep and self._max_data is not None and arr.nbytes > self._max_data:
                keep = False
            # The same host array handed in again (one tensor recorded as a module's output
            # and the next module's input): reuse its statistics and, within a shard, its bytes.
            hit = None
            for r in self._recent:
                if r[0] is arr and r[1] == logical:
                    hit = r
                    break
            pre = item.stats
            if pre is None and self._prestats:
                pre = self._prestats.pop(item.seq, None)
            if hit is not None:
                numel, stats = hit[2], hit[3]
                if keep and hit[4] == shard.index and hit[5] != _LOC_NONE:
                    loc, off, nb = hit[5], hit[6], hit[7]
                else:
                    loc, off, nb = shard.put_data(item.seq, to_storage(np.asarray(arr), logical)) if keep else (_LOC_NONE, 0, 0)
            else:
                stored = to_storage(arr, logical)
                numel = stored.size
                if pre is None and keep and stored.nbytes >= BIG_TENSOR_BYTES and not self.options.compression:
                    # large tensor: its statistics (GIL-free C kernel) overlap its write (os.pwrite)
                    pending = self._stats_pool().submit(stats_tuple, stored, logical)
                    loc, off, nb = shard.put_data(item.seq, stored)
                    stats = pending.result()
                else:
                    if pre is not None:
                        stats = pre
                    elif self._summary_c is not None and logical in KINDS:  # to_storage made it C-ready
                        stats = self._summary_c(stored, KINDS[logical])
                    else:
                        stats = stats_tuple(stored, logical)
                    loc, off, nb = shard.put_data(item.seq, stored) if keep else (_LOC_NONE, 0, 0)
                if stored.nbytes <= self._remember_max:
                    recent = self._recent
                    recent.append((arr, logical, numel, stats, shard.index, loc, off, nb))
                    if len(recent) > _RECENT:
                        del recent[0]
        tkey = (logical, shape)
        tids = shard.cache.get(tkey)
        if tids is None:
            tids = shard.cache[tkey] = (shard.intern(logical), shard.intern(self._shape_json(shape)))
        shard.rows += _pack(
            item.seq, h.step, h.phase, h.kind, loc, h.call, h.parent, h.call_index,
            hids[0], hids[1], hids[2], tids[0], tids[1], hids[3], hids[4], numel, off, nb, *stats,
        )

    def _stats_pool(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="padiff-trace-stats")
        return self._pool

    def _batch_stats(self, first: _Item, following: list[Any]) -> None:
        """Summarise ``first`` and the small float tensors behind it (``following``: the rest of
        the writer's batch) in one pass (numpy call overhead dominates for tiny tensors)."""
        items = [first] + [it for it in following if isinstance(it, _Item) and _small(it)]
        items = [it for it in items if it.seq not in self._prestats and not any(r[0] is it.data for r in self._recent)]
        if len(items) < 8:
            return
        got = stats_many([it.data for it in items])  # type: ignore[misc]
        if got is not None:
            self._prestats.update((it.seq, st) for it, st in zip(items, got))

    def _stack_json(self, stack: tuple[Frame, ...]) -> str:
        if not stack:
            return ""
        text = self._stack_cache.get(stack)
        if text is None:
            if len(self._stack_cache) > 100_000:
                self._stack_cache.clear()
            text = self._stack_cache[stack] = stack_to_json(stack)
        return text

    def _shape_json(self, shape: tuple[int, ...]) -> str:
        text = self._shape_cache.get(shape)
        if text is None:
            if len(self._shape_cache) > 100_000:
                self._shape_cache.clear()
            text = self._shape_cache[shape] = json.dumps([int(d) for d in shape])
        return text

    def _summary(self) -> dict[str, Any]:
        return {
            "records": self._seq,
            "counts": {_KIND_LABEL[k]: n for k, n in self._counts.items()},
            "steps": sorted(self._steps),
            "shards": self._shard_index,
            "closed": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }


def _small(item: _Item) -> bool:
    """A plain host float array small enough for batched statistics."""
    arr = item.data
    if not isinstance(arr, np.ndarray) or not 0 < arr.size <= MANY_MAX_ELEMS:
        return False
    name = dtype_name(arr.dtype)
    return name in ("float16", "float32", "float64") and (item.dtype or name) == name


def _one_line(exc: BaseException) -> str:
    """A short, single-line description (HDF5 errors span many lines)."""
    errno = getattr(exc, "errno", None)
    if isinstance(errno, int) and errno > 0:
        return f"{os.strerror(errno)} ({type(exc).__name__} errno {errno})"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__


def phase_of(kind: Kind) -> Phase:
    """The phase a kind of record normally belongs to."""
    if kind in (Kind.GRAD_OUTPUT, Kind.GRAD_INPUT, Kind.PARAM_GRAD):
        return Phase.BACKWARD
    if kind in (Kind.PARAM, Kind.BUFFER):
        return Phase.OTHER
    return Phase.FORWARD
