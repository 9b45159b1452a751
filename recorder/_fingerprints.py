"""A live model's tensors' statistics as a trace keeps them (``STAT_FIELDS``), read only when the
weight matcher asks: copies of the weights (an EMA, an averaged model) are known by them
(``matching._shadows``), and on an accelerator each is a copy to the host."""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Mapping as AbcMapping
from typing import Any

import numpy as np

from padiff_trace import Deferred
from padiff_trace.arrays import stats_tuple

from ._adapter import Adapter

__all__ = ["Fingerprints"]


class Fingerprints(AbcMapping[str, tuple[float, ...]]):
    """name -> a model tensor's statistics (``STAT_FIELDS``), as a trace keeps them: computed when
    the matcher asks (only for tensors left unpaired and the paired ones of their shapes)."""

    def __init__(self, adapter: Adapter, tensors: dict[str, Any]) -> None:
        self._adapter, self._tensors = adapter, tensors
        self._done: dict[str, tuple[float, ...]] = {}

    def __getitem__(self, name: str) -> tuple[float, ...]:
        got = self._done.get(name)
        if got is None:
            data, dtype, _, _ = self._adapter.to_host(self._tensors[name])
            if isinstance(data, Deferred):
                data = data.fetch()
            got = self._done[name] = tuple(stats_tuple(data, dtype)) if isinstance(data, np.ndarray) and data.size else ()
        return got

    def __iter__(self) -> Iterator[str]:
        return iter(self._tensors)

    def __len__(self) -> int:
        return len(self._tensors)
