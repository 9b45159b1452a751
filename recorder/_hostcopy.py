"""Host copies of the tensors a recorder writes, and the few most recent ones kept for reuse.

A module's output is usually the next module's input: the second record of the same unchanged
tensor reuses the first one's copy (or summary) instead of copying and summarising it again.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from padiff_trace import Deferred, Summary
from padiff_trace.arrays import Recent, copy_with_stats, stats_tuple, to_storage

from ._adapter import Adapter

__all__ = ["HostCopies", "host_array"]

_KEEP = 4  # recent tensors remembered


@dataclass(slots=True)
class _Seen:
    """A tensor recorded recently: itself (weakly, unless a storage key names its bytes), its
    in-place version then, and what the writer was handed for it."""

    ref: Callable[[], Any]
    version: int
    key: Any
    host: Any  # (host copy or Summary, logical dtype, shape, device, statistics or None)


class HostCopies:
    """What a recorder hands its writer for a tensor: ``(data, logical dtype, shape, device,
    statistics or None)``; ``max_bytes``: copies larger than this are not remembered."""

    def __init__(self, adapter: Adapter, max_bytes: int) -> None:
        self._adapter = adapter
        self._max_bytes = max_bytes
        self._recent: Recent[_Seen] = Recent(_KEEP)

    def copy(self, t: Any) -> Any:
        """A host copy of ``t`` with its statistics. A tensor already in host memory is copied
        and summarised in one pass; others (GPU) are copied by the adapter and summarised by
        the writer (statistics None). A tensor recorded again unchanged reuses its copy."""
        ad = self._adapter
        version, key = ad.tensor_version(t), ad.storage_key(t)
        host = self._seen(t, version, key)
        if host is not None and type(host[0]) is not Summary:
            return host
        view = ad.host_view(t)
        if view is not None:
            arr, logical, shape, device = view
            copy, stats = copy_with_stats(to_storage(arr, logical), logical)
            host = (copy, logical, shape, device, stats)
        else:
            host = (*ad.to_host(t), None)
        if isinstance(host[0], np.ndarray) and host[0].nbytes <= self._max_bytes:
            self._remember(t, version, key, host)
        return host

    def summary(self, t: Any) -> Any:
        """For a record that keeps no data: the statistics of a tensor already in host memory,
        computed now on a zero-copy view (no copy, nothing queued); None when ``t`` is not
        there (GPU), and the writer summarises a host copy instead."""
        ad = self._adapter
        version, key = ad.tensor_version(t), ad.storage_key(t)
        host = self._seen(t, version, key)
        if host is not None:
            return host  # a host copy or a summary: either serves a statistics-only record
        view = ad.host_view(t)
        if view is None:
            return None
        arr, logical, shape, device = view
        stored = to_storage(arr, logical)
        host = (Summary(int(stored.size), stats_tuple(stored, logical)), logical, shape, device, None)
        self._remember(t, version, key, host)
        return host

    def _seen(self, t: Any, version: int, key: Any) -> Any:
        """What was recorded for ``t`` recently, if it has not changed since: the same object, or
        (paddle) another live wrapper of the same bytes, at the same in-place version."""
        for seen in self._recent:
            old = seen.ref()
            if old is not None and seen.version == version and (old is t or (key is not None and seen.key == key)):
                return seen.host
        return None

    def _remember(self, t: Any, version: int, key: Any, host: Any) -> None:
        # a wrapper with a storage key is held (its hook's wrapper dies right after the hook, the
        # bytes do not): at most the last few, and it keeps its address from being reused
        ref: Callable[[], Any] = weakref.ref(t) if key is None else (lambda: t)
        self._recent.prune(lambda seen: seen.ref() is not None)
        self._recent.add(_Seen(ref, version, key, host))


def host_array(adapter: Adapter, t: Any, floating: bool = False) -> np.ndarray | None:
    """The model's own tensor ``t`` as a host array: an integer one (the spec's own input), or with
    ``floating`` a floating one (a weight the model keeps); None for any other dtype."""
    if adapter.is_floating(t) != floating:
        return None
    data, _, shape, _ = adapter.to_host(t)
    if isinstance(data, Deferred):
        data = data.fetch()
    if not isinstance(data, np.ndarray) or (not floating and data.dtype.kind not in "iu"):
        return None
    return data.reshape(shape)
