"""What a producer hands the trace writer besides plain arrays, and the writer's options."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["Deferred", "Summary", "WriterOptions"]


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
