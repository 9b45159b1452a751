"""A value's identity within one trace, for rules that follow a value from call to call."""

from __future__ import annotations

import math
from typing import Any

from ..alignment._records import stats_identity

__all__ = ["flat_value_key", "value_key"]


def value_key(r: Any) -> tuple[Any, ...] | None:
    """One value's identity within a trace: dtype, shape and statistics (the writer keeps a
    tensor recorded twice close together once, but the same mask handed to every layer is
    stored again further on: its statistics are what stay the same)."""
    if not getattr(r, "is_tensor", False) or getattr(r, "device", "") == "python" or not getattr(r, "numel", 0):
        return None
    try:
        stats = r.stats
    except (AttributeError, KeyError, IndexError, ValueError, OSError):
        return None
    return (r.dtype, tuple(r.shape), *stats_identity(stats))


def flat_value_key(r: Any) -> tuple[Any, ...] | None:
    """``value_key`` without the shape: the same values reshaped (a pooled map flattened)."""
    k = value_key(r)
    return None if k is None else (k[0], int(math.prod(k[1])), *k[2:])
