"""Where a recording's records go: host copies of the values, the trace writer, and what
happens when writing fails.

The recorder (``_session``) decides *what* to record (hooks, filters, call bookkeeping); a
``RecordSink`` turns each (header, value) into a trace record: a tensor is copied to the host
(or summarised when its data is not kept), a Python scalar stored as a 0-d array, anything
else named by its type. A tensor it cannot copy (sparse, nested) is recorded without values,
never raised into the model. When writing fails (a full disk) that error is raised once and
nothing more is written: the model unwinds through hooks that would raise it again.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

import numpy as np

from padiff_trace import RecordHeader, TraceWriteError, TraceWriter
from padiff_trace.arrays import UNCAPTURED

from ._adapter import Adapter
from ._distributed import local_shard
from ._hostcopy import HostCopies
from ._nest import PY_SCALARS
from ._options import RecordOptions

__all__ = ["RecordSink"]

logger = logging.getLogger(__name__)


class RecordSink:
    """The trace writer of one recording, behind ``emit``."""

    def __init__(self, adapter: Adapter, options: RecordOptions) -> None:
        self._adapter, self._options = adapter, options
        self._writer: TraceWriter | None = None
        self._broken: TraceWriter | None = None  # the writer after it failed: nothing more is written
        self._copies = HostCopies(adapter, options.queue_bytes // 8)

    def open(self, path: Path, meta: dict[str, Any], overwrite: bool) -> None:
        self._writer = TraceWriter(path, meta, self._options.writer_options(), overwrite=overwrite)

    @property
    def writing(self) -> bool:
        """Open and not failed: records are written."""
        return self._writer is not None

    @property
    def failure(self) -> BaseException | None:
        """The error that stopped writing (raised once already), or None."""
        writer = self._writer or self._broken
        return writer.failure if writer is not None else None

    def close(self, failed: bool, reason: str | None) -> None:
        """Finish the trace (``failed``: mark it aborted with ``reason``)."""
        writer, self._writer, self._broken = self._writer or self._broken, None, None
        if writer is None:
            return
        if failed:
            writer.abort(reason or "failed")
        else:
            writer.close()

    def emit(self, header: RecordHeader, value: Any) -> None:
        """One record; the options decide whether a tensor's data is kept."""
        writer = self._writer
        if writer is None:
            return
        try:
            self._append(writer, header, value)
        except TraceWriteError:
            self._broken, self._writer = writer, None
            raise

    def emit_kept(self, header: RecordHeader, value: Any) -> None:
        """One record whose data is always kept, whatever the options (a random draw that
        another recorder replays)."""
        writer = self._writer
        if writer is None:
            return
        try:
            if value is None:
                writer.append(dataclasses.replace(header, device="python"), None, dtype="py:NoneType")
            else:
                data, dtype, shape, device, stats = self._copies.copy(value)
                writer.append(dataclasses.replace(header, device=device), data, dtype=dtype, shape=shape, stats=stats)
        except TraceWriteError:
            self._broken, self._writer = writer, None
            raise

    def note(self, key: str, text: str) -> None:
        """A note in the trace's summary (``TraceWriter.note``)."""
        if self._writer is not None:
            self._writer.note(key, text)

    def flush(self) -> None:
        """Make what was written so far a readable shard (another recorder may wait for it)."""
        writer = self._writer
        if writer is None:
            return
        try:
            writer.flush()
        except TraceWriteError:
            self._broken, self._writer = writer, None
            raise

    def _append(self, writer: TraceWriter, header: RecordHeader, value: Any) -> None:
        value = local_shard(value)  # a DTensor: this rank's shard (``_distributed``)
        if self._adapter.is_tensor(value):
            keep = self._options.keep_data(header.kind, header.step)
            try:
                host = None if keep else self._copies.summary(value)
                data, dtype, shape, device, stats = host if host is not None else self._copies.copy(value)
            except Exception as exc:  # a tensor we cannot copy (sparse, nested, ...) never breaks the model
                layout = "nested" if getattr(value, "is_nested", False) else getattr(value, "layout", type(value).__name__)
                what = f"{UNCAPTURED}{layout}:{getattr(value, 'dtype', '?')}"
                logger.warning("%s/%s: recorded without values (%s: %s)", header.module, header.position, what, exc)
                writer.append(header, None, dtype=what.replace(" ", ""), shape=_shape_or_none(value))
                return
            writer.append(
                dataclasses.replace(header, device=device), data, dtype=dtype, shape=shape, keep_data=keep, stats=stats
            )
        elif isinstance(value, PY_SCALARS):
            writer.append(dataclasses.replace(header, device="python"), np.asarray(value))
        else:
            writer.append(dataclasses.replace(header, device="python"), None, dtype=f"py:{type(value).__name__}")


def _shape_or_none(value: Any) -> tuple[int, ...]:
    """A tensor's shape where it has one (a nested tensor's ragged sizes raise: none)."""
    try:
        return tuple(int(n) for n in value.shape)
    except Exception:  # any layout the framework cannot size must not reach the model
        return ()
