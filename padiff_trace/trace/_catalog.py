"""Find and describe the traces archived under a directory (``padiff-trace ls DIR``)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._errors import UserError
from ._reader import open_trace
from ._tracedir import shard_number

__all__ = ["CatalogEntry", "catalog", "find_traces"]


@dataclass(frozen=True)
class CatalogEntry:
    """One trace found by ``catalog``: its metadata, size, state and health (``error``: why it
    could not be opened at all)."""

    path: Path
    framework: str
    framework_version: str
    device: str
    created: str
    steps: int
    records: int
    size_bytes: int
    complete: bool
    tags: dict[str, str] = field(default_factory=dict)
    error: str = ""  # the trace could not be opened at all
    health: str = ""  # ``Trace.health.brief()``: "ok" or "DAMAGED (...)"
    distributed: dict[str, Any] = field(default_factory=dict)  # meta ``distributed``: one rank of a multi-process run

    @property
    def damaged(self) -> bool:
        return bool(self.error) or self.health.startswith("DAMAGED")

    @property
    def model(self) -> str:
        return self.tags.get("model", "")

    @property
    def version(self) -> str:
        return self.tags.get("version", "")


def find_traces(root: str | os.PathLike[str]) -> Iterator[Path]:
    """Trace directories under ``root`` (a trace's own directory is not descended into), then
    the directories this user may not list: each may be a trace, and opening it says why it
    cannot be read (a catalog lists it as unreadable instead of leaving it out)."""
    unlisted: list[Path] = []

    def denied(exc: OSError) -> None:  # os.walk skips what it cannot list; note what that was
        if isinstance(exc, PermissionError) and exc.filename is not None:
            unlisted.append(Path(os.fsdecode(exc.filename)))

    for dirpath, dirnames, files in os.walk(root, onerror=denied):
        p = Path(dirpath)
        if any(shard_number(name) is not None for name in files):
            dirnames.clear()
            yield p
        else:
            dirnames.sort()
    yield from unlisted


def _entry(path: Path) -> CatalogEntry:
    try:
        with open_trace(path) as tr:
            meta = tr.meta
            return CatalogEntry(
                path,
                str(meta.get("framework", "")),
                str(meta.get("framework_version", "")),
                str(meta.get("device", "")),
                str(meta.get("created", "")),
                len(tr.steps()),
                len(tr),
                tr.size_bytes(),
                tr.complete,
                {str(k): str(v) for k, v in (meta.get("tags") or {}).items()} if isinstance(meta.get("tags"), dict) else {},
                health=tr.health.brief(),
                distributed=dict(meta["distributed"]) if isinstance(meta.get("distributed"), dict) else {},
            )
    except UserError as exc:  # list damaged and unreadable traces too, with the reason
        return CatalogEntry(path, "?", "", "", "", 0, 0, 0, False, error=str(exc))


def catalog(root: str | os.PathLike[str], tags: Mapping[str, str] | None = None) -> list[CatalogEntry]:
    """Entries for every trace under ``root`` whose tags include all of ``tags``, oldest first."""
    r = Path(root)
    if not r.is_dir():
        raise UserError(f"{r}: not a directory")
    want: dict[str, Any] = dict(tags or {})
    entries = [_entry(p) for p in find_traces(r)]
    entries = [e for e in entries if all(e.tags.get(k) == v for k, v in want.items())]
    return sorted(entries, key=lambda e: (e.created, str(e.path)))
