"""Reading a multi-rank trace: ``T/ranks.json`` and one ordinary trace per rank, ``T/rank-NNNNN``.

The recorder writes this layout under a framework's launcher (``padiff_trace.recorder``,
docs/distributed.md); here it is read back: the world size, and for each rank whether its
trace is complete, incomplete (killed, or the model raised), missing, damaged, or left by an
earlier launch. Rank directories past the world size are strays of an earlier recording.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from padiff_trace import NotATraceError, TraceNotFoundError, UserError, open_trace
from padiff_trace.recorder import RANKS_FILE, RANKS_FORMAT, is_multirank, rank_dir, rank_of_dir

__all__ = ["RankState", "RankedTrace", "is_multirank", "open_ranks"]

COMPLETE, INCOMPLETE, MISSING, DAMAGED, STALE = "complete", "incomplete", "missing", "damaged", "stale"


@dataclass(frozen=True)
class RankState:
    """One rank of a multi-rank trace: its directory and what is there."""

    rank: int
    world_size: int
    path: Path
    state: str  # complete, incomplete, missing, damaged, stale (an earlier launch's trace)
    why: str = ""  # for every state but complete: one phrase
    records: int = 0
    steps: tuple[int, ...] = ()
    size_bytes: int = 0
    framework: str = ""
    distributed: dict[str, Any] = field(default_factory=dict)  # the rank trace's meta ``distributed``

    @property
    def readable(self) -> bool:
        """There is a trace to compare (complete, or incomplete: what it holds)."""
        return self.state in (COMPLETE, INCOMPLETE)

    def line(self) -> str:
        """``rank 1 of 2: incomplete (the recorder did not close it: killed or still running)``."""
        why = f" ({self.why})" if self.why else ""
        return f"rank {self.rank} of {self.world_size}: {self.state}{why}"


@dataclass(frozen=True)
class RankedTrace:
    """A multi-rank trace directory: the world size, and one ``RankState`` per rank."""

    path: Path
    world_size: int
    framework: str
    launcher: str
    launch_id: str | None
    ranks: tuple[RankState, ...]
    strays: tuple[Path, ...] = ()  # rank directories past the world size (an earlier, larger launch)

    @property
    def complete(self) -> bool:
        return all(r.state == COMPLETE for r in self.ranks)

    @property
    def backend(self) -> str | None:
        return next((str(r.distributed["backend"]) for r in self.ranks if r.distributed.get("backend")), None)

    def problems(self) -> list[str]:
        """One line per rank that is not complete: ``rank 1 of 2: missing``."""
        return [r.line() for r in self.ranks if r.state != COMPLETE]

    def __iter__(self) -> Iterator[RankState]:
        return iter(self.ranks)


def _manifest(root: Path) -> dict[str, Any]:
    path = root / RANKS_FILE
    if not path.is_file():
        return {}
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError.from_os(path, "read the rank manifest", exc, "another trace") from None
    except ValueError as exc:
        raise UserError(f"{path}: not a rank manifest ({exc}); remove it if the rank-NNNNN directories are all there") from None
    if not isinstance(doc, dict) or doc.get("format") != RANKS_FORMAT or not isinstance(doc.get("world_size"), int):
        raise UserError(f"{path}: not a padiff-trace rank manifest (no 'format': {RANKS_FORMAT!r} and 'world_size')")
    return doc


def _state(path: Path, rank: int, world: int, launch_id: str | None) -> RankState:
    """What is at ``path``, rank ``rank``'s directory."""
    if not path.is_dir():
        return RankState(rank, world, path, MISSING, "no trace: the process never started recording")
    try:
        with open_trace(path) as tr:
            dist = tr.meta.get("distributed")
            dist = dict(dist) if isinstance(dist, dict) else {}
            base: dict[str, Any] = {"records": len(tr), "steps": tuple(tr.steps()), "size_bytes": tr.size_bytes(),
                                    "framework": str(tr.meta.get("framework", "")), "distributed": dist}
            theirs = dist.get("launch_id")
            if launch_id is not None and theirs is not None and theirs != launch_id:
                return RankState(rank, world, path, STALE, f"left by an earlier launch ({theirs}); this launch's rank {rank} "
                                 "wrote nothing", **base)
            if tr.complete:
                return RankState(rank, world, path, COMPLETE, **base)
            return RankState(rank, world, path, INCOMPLETE, _why_incomplete(tr), **base)
    except (TraceNotFoundError, NotATraceError) as exc:
        return RankState(rank, world, path, MISSING, _reason(exc, path))
    except UserError as exc:  # damaged beyond opening, unreadable
        return RankState(rank, world, path, DAMAGED, _reason(exc, path))


def _why_incomplete(tr: Any) -> str:
    if "aborted" in tr.summary:
        return f"recorder stopped: {tr.summary['aborted']}"
    if tr.missing_shards:
        return f"missing shards {tr.missing_shards}"
    if tr.writer_pid is not None:
        return f"being written by pid {tr.writer_pid}"
    if tr.damage:
        return "shards damaged: padiff-trace info on the rank says more"
    return "the recorder did not close it: killed or still running"


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _reason(exc: BaseException, path: Path) -> str:
    text = str(exc)
    return text[len(f"{path}: "):] if text.startswith(f"{path}: ") else text


def open_ranks(path: str | os.PathLike[str]) -> RankedTrace:
    """The ranks of the multi-rank trace at ``path`` (a ``UserError`` when it is not one). The
    world size is the manifest's, else the largest any rank trace recorded, else the number of
    rank directories."""
    root = Path(path)
    if not is_multirank(root):
        raise NotATraceError(f"{root}: not a multi-rank trace (no {RANKS_FILE}, no rank-NNNNN directories)")
    doc = _manifest(root)
    dirs = {n: c for c in root.iterdir() if (n := rank_of_dir(c.name)) is not None and c.is_dir()}
    world = int(doc.get("world_size", 0))
    launch_id = doc.get("launch_id") if isinstance(doc.get("launch_id"), str) else None
    found = {n: _state(p, n, world, launch_id) for n, p in sorted(dirs.items())}
    if world < 1:  # no manifest: what the ranks say, else what is there
        world = max([_int(s.distributed.get("world_size")) for s in found.values()] + [max(dirs, default=-1) + 1])
        found = {n: dataclasses.replace(s, world_size=world) for n, s in found.items()}
    if world < 1:
        raise NotATraceError(f"{root}: {RANKS_FILE} says a world of {world} processes")
    ranks = tuple(found.get(k) or _state(rank_dir(root, k), k, world, launch_id) for k in range(world))
    first = next((r for r in ranks if r.distributed), None)
    framework = str(doc.get("framework") or (first.framework if first else ""))
    launcher = str(doc.get("launcher") or (first.distributed.get("launcher") if first else None) or "?")
    strays = tuple(p for n, p in sorted(dirs.items()) if n >= world)
    return RankedTrace(root, world, framework, launcher, launch_id, ranks, strays)
