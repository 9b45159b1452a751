"""Giving freed memory back to the system in long analysis runs (glibc's ``mallopt``).

glibc raises its mmap threshold each time a large block is freed (up to 32 MiB), so after
the first few temporary numpy arrays every array below that size is carved from the heap,
and the heap only shrinks from its top: a comparison that builds and drops many arrays of a
few MiB keeps their pages. A fixed threshold maps each block of at least 128 KiB on its own
and unmaps it when freed. ``compare`` of two million-record traces peaked at 819 MiB with
it and 890 without, in the same wall time (docs/benchmarks.md). The CLI's ``compare`` and
``run`` call it (``run`` records in child processes, which start with glibc's defaults); a
recorder does not (the user's model keeps the allocator it was measured with).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os

__all__ = ["MMAP_THRESHOLD", "release_freed_memory"]

logger = logging.getLogger(__name__)

MMAP_THRESHOLD = 128 * 1024  # glibc's own starting value, kept fixed
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt parameter numbers (malloc.h)


def release_freed_memory() -> bool:
    """Fix glibc's mmap and trim thresholds for this process (True when set). Does nothing
    where the C library has no ``mallopt`` (musl, macOS, Windows) or where the user set
    ``MALLOC_MMAP_THRESHOLD_`` / ``MALLOC_TRIM_THRESHOLD_`` (their choice stands)."""
    if any(k in os.environ for k in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    ok = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, MMAP_THRESHOLD))
    logger.debug("fixed malloc thresholds at %d bytes: %s", MMAP_THRESHOLD, ok)
    return ok
