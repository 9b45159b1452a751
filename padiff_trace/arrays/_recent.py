"""The few most recent tensors seen, for "the same tensor again".

A module's output is usually the next module's input, so a tensor is often recorded twice in
a row. Two places remember the last few: the recorder (a device tensor already copied to the
host, or summarised) and the trace writer (a host array already summarised and stored in this
shard). What each remembers differs; how it remembers is this one class: a short list,
newest last, searched front to back (a handful of entries: a scan beats a dict keyed by id).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

__all__ = ["Recent"]

E = TypeVar("E")


class Recent(Generic[E]):
    """At most ``keep`` entries, oldest dropped first."""

    __slots__ = ("_entries", "_keep")

    def __init__(self, keep: int) -> None:
        self._keep = keep
        self._entries: list[E] = []

    def add(self, entry: E) -> None:
        entries = self._entries
        entries.append(entry)
        if len(entries) > self._keep:
            del entries[0]

    def prune(self, alive: Callable[[E], bool]) -> None:
        """Forget the entries ``alive`` says are gone."""
        self._entries = [e for e in self._entries if alive(e)]

    def __iter__(self) -> Iterator[E]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)
