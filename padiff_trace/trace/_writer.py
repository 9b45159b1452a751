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
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import TraceExistsError, TraceWriteError, exit_reason, os_failure
from ._encode import Item, RowEncoder
from ._header import RecordHeader
from ._meta import base_meta
from ._payloads import Deferred, Summary, WriterOptions
from ._schema import FORMAT_VERSION, Kind
from ._shardwriter import BIG_TENSOR_BYTES, ShardWriter
from ._tracedir import DirLock, clear_for_overwrite

__all__ = ["Deferred", "Summary", "TraceWriter", "WriterOptions"]

logger = logging.getLogger(__name__)

_CLOSE = object()
_FLUSH = object()
_TAKE = 1024  # records the writer takes off the queue at once
_KIND_LABEL = {k: k.label for k in Kind} | {int(k): k.label for k in Kind}


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
        self.recording = uuid.uuid4().hex  # written in every shard: shards of other runs are not merged
        self._dirlock = DirLock(self.path, self.recording)
        self._prepare_dir(overwrite)
        full_meta = base_meta()
        full_meta.update(meta or {})
        full_meta["format_version"] = FORMAT_VERSION
        self.meta = full_meta
        self._meta_json = json.dumps(full_meta, ensure_ascii=False, sort_keys=True, default=str)
        try:
            self._meta_json.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate (e.g. an undecodable file name in argv): ASCII JSON
            self._meta_json = json.dumps(full_meta, ensure_ascii=True, sort_keys=True, default=str)
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
        self._flushed = 0  # records in shards already visible (they survive a failure)
        self._abort_reason: str | None = None
        self._notes: dict[str, str] = {}  # what the recording could not do, said in the summary (``note``)
        self._rows = RowEncoder(self.options)  # used by the writer thread only
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
            self._queue.append(Item(seq, header, data, dtype, shape, keep_data, nbytes, stats))
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
        self._dirlock.release()
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
        self._dirlock.release()

    def note(self, key: str, text: str) -> None:
        """Say in the trace's summary something the recording could not do (its backward pass
        failed): the reader's ``summary["notes"][key]``."""
        with self._lock:
            self._notes[key] = text

    @property
    def records_written(self) -> int:
        return self._seq

    @property
    def failure(self) -> TraceWriteError | None:
        """The error writing stopped with (disk full, ...), None while the writer works."""
        try:
            self._raise_if_failed()
        except TraceWriteError as exc:
            return exc
        return None

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort(exit_reason(exc if isinstance(exc, BaseException) else None))

    def _raise_if_failed(self) -> None:
        if self._error is not None:
            kept = (
                f"the {self._flushed} record(s) flushed before stay readable (incomplete trace)"
                if self._flushed else "nothing was flushed before"
            )
            raise TraceWriteError(f"{self.path}: writing the trace failed: {os_failure(self._error)}; {kept}") from self._error

    def _prepare_dir(self, overwrite: bool) -> None:
        """Create the directory and take its writer lock (which also proves it writable), then
        make room: only verified shards of an earlier trace and unfinished shards are removed."""
        p = self.path
        if p.exists() and not p.is_dir():
            raise TraceExistsError(f"{p}: exists and is not a trace directory")
        try:
            p.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise TraceWriteError(f"{p}: cannot write the trace here: {os_failure(exc)}") from exc
        self._dirlock.acquire()
        try:
            removed = clear_for_overwrite(p, overwrite)
        except BaseException as exc:
            self._dirlock.release()
            if isinstance(exc, OSError) and not isinstance(exc, TraceExistsError):
                raise TraceWriteError(f"{p}: cannot remove the earlier trace: {os_failure(exc)}") from exc
            raise
        if removed:
            logger.info("%s: removed %d file(s) of an earlier trace", p, len(removed))

    # ---------------------------------------------------------------- writer thread
    def _run(self) -> None:
        try:
            self._loop()
        finally:
            self._rows.close()

    def _loop(self) -> None:
        shard: ShardWriter | None = None
        opened = 0.0
        opts = self.options
        rows = self._rows
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
                    rows.prepare(item, batch, n_done + 1)
                    rows.encode(shard, item)
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
        except BaseException as exc:
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
        self._flushed += shard.n_rows

    def _new_shard(self) -> ShardWriter:
        shard = ShardWriter(self.path, self._shard_index, self._meta_json, self.options.compression, self.recording)
        self._shard_index += 1
        return shard

    def _summary(self) -> dict[str, Any]:
        return {
            "records": self._seq,
            "counts": {_KIND_LABEL[k]: n for k, n in self._counts.items()},
            "steps": sorted(self._steps),
            "shards": self._shard_index,
            "closed": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            **({"notes": dict(self._notes)} if self._notes else {}),
        }
