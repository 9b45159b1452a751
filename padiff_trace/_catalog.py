"""Find and describe the traces archived under a directory (``padiff-trace ls DIR``)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._errors import UserError
from ._reader import open_trace
from ._schema import SHARD_GLOB

__all__ = ["CatalogEntry", "catalog", "find_traces"]


@dataclass(frozen=True)
class CatalogEntry:
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
    error: str = ""

    @property
    def model(self) -> str:
        return self.tags.get("model", "")

    @property
    def version(self) -> str:
        return self.tags.get("version", "")


def find_traces(root: str | os.PathLike[str]) -> Iterator[Path]:
    """Trace directories under ``root`` (a trace's own directory is not descended into)."""
    for dirpath, dirnames, _ in os.walk(root):
        p = Path(dirpath)
        if any(p.glob(SHARD_GLOB)):
            dirnames.clear()
            yield p
        else:
            dirnames.sort()


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
                {str(k): str(v) for k, v in (meta.get("tags") or {}).items()},
            )
    except UserError as exc:  # list damaged traces too, with the reason
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
