"""Turning a queued record into a shard row: its statistics, its stored bytes, its string ids.

Runs on the writer thread, once per record: the small-record hot path (100k records must
take seconds), hence locals, cached string ids and a few remembered arrays.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..arrays._dtypes import dtype_name, to_storage
from ..arrays._native import KINDS, kernel
from ..arrays._recent import Recent
from ..arrays._stats import MANY_MAX_ELEMS, stats_many, stats_tuple
from ._header import Frame, HeaderIds, RecordHeader, stack_to_json
from ._integrity import crc_chunks
from ._payloads import Deferred, Summary, WriterOptions
from ._schema import CRC_CHUNK, STAT_FIELDS, DataLoc
from ._shardwriter import BIG_TENSOR_BYTES, ROW, ShardWriter

__all__ = ["Item", "RowEncoder"]

_NAN_STATS = (float("nan"),) * len(STAT_FIELDS)
_RECENT = 4  # arrays remembered for duplicate detection
_BATCH = 512  # small tensors summarised together
_LOC_NONE = int(DataLoc.NONE)
_pack = ROW.pack


@dataclass(slots=True)
class _Stored:
    """A host array this encoder summarised (and, where ``loc`` says so, stored) recently."""

    array: np.ndarray
    logical: str
    numel: int
    stats: tuple[float, ...]
    shard: int
    loc: int
    off: int
    nbytes: int


@dataclass(slots=True)
class Item:
    """One queued record."""

    seq: int
    header: RecordHeader
    data: np.ndarray | Deferred | Summary | None
    dtype: str | None
    shape: tuple[int, ...] | None
    keep_data: bool
    nbytes: int
    stats: tuple[float, ...] | None = None


class RowEncoder:
    """The writer thread's per-record work, and the state it keeps between records."""

    def __init__(self, options: WriterOptions) -> None:
        self.options = options
        self._stack_cache: dict[tuple[Frame, ...], str] = {}
        self._shape_cache: dict[tuple[int, ...], str] = {}
        self._recent: Recent[_Stored] = Recent(_RECENT)
        self._remember_max = options.queue_bytes // 8
        self._keep_any = not options.stats_only
        self._max_data = options.max_data_bytes
        self._prestats: dict[int, tuple[float, ...]] = {}  # seq -> statistics computed in a batch
        self._summary_c = getattr(kernel(), "summary", None)
        self._batch = self._summary_c is None  # numpy statistics: batch small tensors (the C kernel needs not)
        self._pool: ThreadPoolExecutor | None = None  # statistics of large tensors, beside their write

    def prepare(self, item: Item, batch: list[Any], after: int) -> None:
        """Before ``encode(item)``: with the numpy statistics, summarise the small tensors from
        ``batch[after:]`` together with ``item`` (numpy's per-call cost dominates for tiny ones)."""
        if self._batch and item.seq not in self._prestats and _small(item):
            self._batch_stats(item, batch[after : after + _BATCH])

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def encode(self, shard: ShardWriter, item: Item) -> None:
        """Store ``item``'s data in ``shard`` (unless the record keeps none) and append its row."""
        # per-record hot path (100k small records must take seconds): locals, cached string ids
        h = item.header
        arr: Any = item.data  # ndarray | Summary | None once a Deferred is fetched (checked by type() below)
        if type(arr) is Deferred:
            arr = arr.fetch()
        key = (h.module, h.module_type, h.position, h.device, id(h.stack))
        hids = shard.header_ids.get(key)
        if hids is None:  # the stack is kept alive by the cache entry, so its id stays unique
            intern = shard.intern
            stack_id = intern(self._stack_json(h.stack)) if h.stack else intern("")
            hids = shard.header_ids[key] = HeaderIds(
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
                if r.array is arr and r.logical == logical:
                    hit = r
                    break
            pre = item.stats
            if pre is None and self._prestats:
                pre = self._prestats.pop(item.seq, None)
            if hit is not None:
                numel, stats = hit.numel, hit.stats
                if keep and hit.shard == shard.index and hit.loc != _LOC_NONE:
                    loc, off, nb = hit.loc, hit.off, hit.nbytes
                else:
                    loc, off, nb = shard.put_data(item.seq, to_storage(np.asarray(arr), logical)) if keep else (_LOC_NONE, 0, 0)
            else:
                stored = to_storage(arr, logical)
                numel = stored.size
                if keep and stored.nbytes >= BIG_TENSOR_BYTES and not self.options.compression:
                    # large tensor: its statistics (GIL-free C kernel) and the CRC-32s of its last
                    # pieces are computed on another thread while this one writes it (os.pwrite)
                    # and then checksums its first pieces (zlib releases the GIL): two cores busy
                    view = np.ascontiguousarray(stored.reshape(-1)).data.cast("B")
                    pieces = -(-len(view) // CRC_CHUNK)
                    split = CRC_CHUNK * (pieces // 2 if pre is None else pieces * 2 // 3)
                    pending = self._stats_pool().submit(_stats_and_crcs, stored, None if pre is not None else logical,
                                                        view[split:])
                    loc, off, nb = shard.put_data(item.seq, stored, crc=False)
                    head = crc_chunks(view[:split])
                    got, tail = pending.result()
                    shard.add_crcs(item.seq, len(view), head + tail)
                    stats = pre if pre is not None else got
                else:
                    if pre is not None:
                        stats = pre
                    elif self._summary_c is not None and logical in KINDS:  # to_storage made it C-ready
                        stats = self._summary_c(stored, KINDS[logical])
                    else:
                        stats = stats_tuple(stored, logical)
                    loc, off, nb = shard.put_data(item.seq, stored) if keep else (_LOC_NONE, 0, 0)
                if stored.nbytes <= self._remember_max:
                    self._recent.add(_Stored(arr, logical, numel, stats, shard.index, loc, off, nb))
        tkey = (logical, shape)
        tids = shard.type_ids.get(tkey)
        if tids is None:
            tids = shard.type_ids[tkey] = (shard.intern(logical), shard.intern(self._shape_json(shape)))
        shard.rows += _pack(
            item.seq, h.step, h.phase, h.kind, loc, h.call, h.parent, h.call_index,
            hids.module, hids.module_type, hids.position, tids[0], tids[1], hids.device, hids.stack, numel, off, nb, *stats,
        )

    def _stats_pool(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="padiff-trace-stats")
        return self._pool

    def _batch_stats(self, first: Item, following: list[Any]) -> None:
        """Summarise ``first`` and the small float tensors behind it (``following``: the rest of
        the writer's batch) in one pass (numpy call overhead dominates for tiny tensors)."""
        items = [first] + [it for it in following if isinstance(it, Item) and _small(it)]
        items = [it for it in items if it.seq not in self._prestats and not any(r.array is it.data for r in self._recent)]
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


def _stats_and_crcs(stored: np.ndarray, logical: str | None, tail: memoryview) -> tuple[tuple[float, ...], list[int]]:
    """On the statistics thread: a large tensor's statistics (unless the producer gave them:
    ``logical`` None) and the CRC-32 of each ``CRC_CHUNK`` of ``tail`` (its last pieces)."""
    stats = stats_tuple(stored, logical) if logical is not None else _NAN_STATS
    return stats, crc_chunks(tail)


def _small(item: Item) -> bool:
    """A plain host float array small enough for batched statistics."""
    arr = item.data
    if not isinstance(arr, np.ndarray) or not 0 < arr.size <= MANY_MAX_ELEMS:
        return False
    name = dtype_name(arr.dtype)
    return name in ("float16", "float32", "float64") and (item.dtype or name) == name
