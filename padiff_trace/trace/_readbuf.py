"""Reusable buffers for reads a caller only looks at (``ShardFiles.dataset_slice(view=True)``).

Tensor bytes are copied out of the shard with ``os.preadv``, never mapped: a mapped file that
another process truncates in place (``cp`` or ``rsync --inplace`` over a trace being compared)
kills the reader with SIGBUS on its next access, while a read of a shrunk file just comes back
short. Reading into fresh memory costs a page fault per 4 KiB; reading into a buffer that is
already faulted in costs one copy (measured 22-27 GB/s against 1.4-3 GB/s for 4 MiB pieces).

A buffer is lent out as a read-only view and is free again once nothing refers to it: numpy
views keep their base array alive, so the base's reference count says whether any view (the
caller's array, a slice of it, a deferred checksum test holding it) still exists.
"""

from __future__ import annotations

import sys
import threading

import numpy as np

__all__ = ["ReadBuffers", "lend"]

_U8 = np.dtype(np.uint8)


class ReadBuffers:
    """At most ``slots`` buffers of at most ``largest`` bytes each, lent as views; reads above
    ``largest``, or when every buffer is in use, get fresh memory. Each buffer held stays in
    the process while the trace is open: few and small (the analyzer reads 4 MiB pieces, two
    worker threads at once)."""

    def __init__(self, slots: int = 2, largest: int = 8 << 20) -> None:
        self._slots: list[np.ndarray] = []
        self._max_slots, self._largest = slots, largest
        self._lock = threading.Lock()  # the analyzer's two worker threads read one trace at once
        self._slots.append(np.empty(0, _U8))
        self._idle = self._refs(0)  # references to a buffer nothing has borrowed, as counted here
        self._slots.clear()

    def _refs(self, k: int) -> int:
        return sys.getrefcount(self._slots[k])

    def take(self, n: int) -> np.ndarray:
        """A writable uint8 array of ``n`` bytes to read into (``lend`` it read-only)."""
        if n > self._largest:
            return np.empty(n, _U8)
        with self._lock:  # the view is made under the lock: its reference marks the buffer taken
            for k in range(len(self._slots)):
                if len(self._slots[k]) >= n and self._refs(k) == self._idle:
                    return self._slots[k][:n]
            return self._grow(n)

    def _grow(self, n: int) -> np.ndarray:
        """A new buffer (replacing a free smaller one once all slots exist), or fresh memory."""
        size = max(n, 1 << 20)
        if len(self._slots) < self._max_slots:
            self._slots.append(np.empty(size, _U8))
            return self._slots[-1][:n]
        for k in range(len(self._slots)):
            if self._refs(k) == self._idle:
                self._slots[k] = np.empty(size, _U8)
                return self._slots[k][:n]
        return np.empty(n, _U8)

    def release_idle(self) -> None:
        """Drop the buffers nothing has borrowed: called when the caller turns to reads of its own
        (a whole tensor for itself), so the buffers of the piecewise reads before do not add to
        the memory that read takes."""
        with self._lock:
            self._slots = [self._slots[k] for k in range(len(self._slots)) if self._refs(k) != self._idle]

    def clear(self) -> None:
        with self._lock:
            self._slots.clear()


def lend(out: np.ndarray) -> np.ndarray:
    """``out`` made read-only: a lent buffer is reused once the caller drops it, never written by it."""
    out.flags.writeable = False
    return out
