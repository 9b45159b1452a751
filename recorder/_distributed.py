"""Models that run as several processes: who this process is, and where its trace goes.

A recording started by a framework's launcher (``torchrun``, ``python -m
paddle.distributed.launch``) writes one ordinary trace per rank under the directory the user
named::

    T/ranks.json        what the directory holds: world size, launcher, launch id
    T/rank-00000/       rank 0's trace (own shards, own lock: crash-safe as any trace)
    T/rank-00001/       ...

Each rank trace's root meta carries ``distributed`` (``Distributed.meta``). How each launcher
tells a process its rank is data, one ``Launcher`` row per framework (``LAUNCHERS``); the
framework's own process-group state comes from the adapter (``Adapter.process_group``). A
process with neither is a single-process recording: its layout and meta are unchanged.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from padiff_trace import TraceExistsError, TraceWriteError, UserError, is_trace

from ._adapter import Adapter

__all__ = [
    "LAUNCHERS",
    "RANKS_FILE",
    "RANKS_FORMAT",
    "Distributed",
    "Launcher",
    "detect_distributed",
    "rank_dir",
    "rank_of_dir",
    "rank_source",
    "is_multirank",
    "local_shard",
    "prepare_rank_dir",
    "place_recording",
    "split_info",
]

RANKS_FILE = "ranks.json"  # T/ranks.json: what a multi-rank trace directory holds
RANKS_FORMAT = "padiff-trace-ranks"
_RANK_DIR = re.compile(r"rank-(\d{5})")


def rank_dir(root: str | os.PathLike[str], rank: int) -> Path:
    """The trace directory of ``rank`` under a multi-rank trace ``root``: ``root/rank-00001``."""
    return Path(root) / f"rank-{rank:05d}"


def rank_of_dir(name: str) -> int | None:
    """The rank a directory name stands for (``rank-00001`` -> 1; exact names only), else None."""
    m = _RANK_DIR.fullmatch(name)
    return int(m.group(1)) if m else None


@dataclass(frozen=True)
class Distributed:
    """Who this process is in a multi-process run; trace meta ``distributed``."""

    rank: int
    world_size: int
    local_rank: int | None
    backend: str | None  # "gloo", "nccl", ... (None: no process group yet, and the launcher names none)
    launcher: str  # "torchrun", "paddle.distributed.launch", or the environment variables it came from
    launch_id: str | None  # the same in every process of one launch (tells an earlier launch's rank apart)
    detected_from: str  # "process group" (the framework's own state) or "environment" (the launcher's)

    def meta(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "world_size": self.world_size,
            "local_rank": self.local_rank,
            "backend": self.backend,
            "launcher": self.launcher,
            "launch_id": self.launch_id,
            "detected_from": self.detected_from,
        }


@dataclass(frozen=True)
class Launcher:
    """One framework's launcher: how it is started for N processes, and the environment
    variables through which it tells each process who it is."""

    framework: str
    name: str  # as the user knows it
    module: str  # started as ``python -m MODULE``
    rank: str  # environment variable: global rank
    world_size: str
    local_rank: str
    launch_id: str  # set by this launcher only, one value per launch
    backend: str | None  # the backend the launcher chose, where it says
    options: tuple[str, ...]  # its flags before the program; "{nproc}" and "{log_dir}" are filled in

    def command(self, nproc: int, program: Sequence[str], log_dir: str | os.PathLike[str]) -> list[str]:
        """The launcher's command line that runs ``program`` (an argv) as ``nproc`` processes;
        ``log_dir``: where a launcher that keeps per-process logs writes them."""
        fill = {"{nproc}": str(nproc), "{log_dir}": os.fspath(log_dir)}
        return [sys.executable, "-m", self.module, *(fill.get(o, o) for o in self.options), *program]

    def identity(self, environ: Mapping[str, str], group: tuple[int, int, str | None] | None) -> Distributed | None:
        """This process in the launch ``environ`` describes (``group``: the framework's initialised
        process group, which wins over the environment); None when this launcher did not start it."""
        if self.rank not in environ and group is None:
            return None
        launcher = self.name if self.launch_id in environ else f"{self.rank}/{self.world_size} environment"
        if group is not None:
            rank, world, backend = group
            source = "process group"
        else:
            rank, world = _int(environ, self.rank), _int(environ, self.world_size)
            backend = environ.get(self.backend) if self.backend else None
            source = "environment"
        local = _int(environ, self.local_rank) if self.local_rank in environ else None
        if not 0 <= rank < world:
            raise UserError(f"{self.rank}={rank} is not a rank of a world of {world} processes ({self.world_size}); "
                            f"start the recording with {self.name}")
        return Distributed(rank, world, local, backend.lower() if backend else None, launcher,
                           environ.get(self.launch_id), source)


# How each framework's launcher says who a process is. torchrun: ``--standalone`` picks a free
# port (two launches on one machine never collide); paddle's launcher writes one log per
# process (rank 0's is also shown), into ``{log_dir}`` instead of ./log.
LAUNCHERS: dict[str, Launcher] = {
    "torch": Launcher("torch", "torchrun", "torch.distributed.run", "RANK", "WORLD_SIZE", "LOCAL_RANK",
                      "TORCHELASTIC_RUN_ID", None, ("--standalone", "--nproc_per_node", "{nproc}", "--no-python")),
    "paddle": Launcher("paddle", "paddle.distributed.launch", "paddle.distributed.launch", "PADDLE_TRAINER_ID",
                       "PADDLE_TRAINERS_NUM", "PADDLE_LOCAL_RANK", "PADDLE_MASTER", "PADDLE_DISTRI_BACKEND",
                       ("--nproc_per_node", "{nproc}", "--log_dir", "{log_dir}")),
}


def _int(environ: Mapping[str, str], name: str) -> int:
    text = environ.get(name, "")
    try:
        return int(text)
    except ValueError:
        raise UserError(f"environment variable {name}={text!r} is not a number; start the recording "
                        "with the framework's launcher (torchrun, python -m paddle.distributed.launch)") from None


def detect_distributed(adapter: Adapter, environ: Mapping[str, str] | None = None) -> Distributed | None:
    """This process's place in a multi-process run, or None for a single process: the adapter's
    framework's launcher first, then the others (a launcher is a launcher, whatever it started).
    A process group of one process that no launcher started counts as a single process."""
    env = os.environ if environ is None else environ
    group = adapter.process_group()
    own = LAUNCHERS.get(adapter.name)
    rows = [own] if own is not None else []
    rows += [row for row in LAUNCHERS.values() if row is not own]
    for row in rows:
        if row.rank in env:
            return row.identity(env, group)
    if group is not None and group[1] > 1 and own is not None:
        return own.identity(env, group)  # a process group without a launcher (``mp.spawn``)
    return None


def is_multirank(path: str | os.PathLike[str]) -> bool:
    """``path`` is a directory holding a multi-rank trace: ``ranks.json`` or ``rank-NNNNN``
    directories, and no shard of its own (a single-process trace)."""
    p = Path(path)
    try:
        if not p.is_dir() or is_trace(p):
            return False
        return (p / RANKS_FILE).is_file() or any(rank_of_dir(c.name) is not None and c.is_dir() for c in p.iterdir())
    except OSError:
        return False  # opening it says why it cannot be read


def rank_source(path: str | None, dist: Distributed | None) -> str | None:
    """A replay source for this process: the same rank's trace when ``path`` is a multi-rank
    trace and this process is a rank; a plain trace serves every rank."""
    if path is None or not is_multirank(path):
        return path
    if dist is None:
        raise UserError(f"{path}: a multi-rank trace; replay one rank into a single process "
                        f"({rank_dir(path, 0)}), or record this model with as many processes")
    return str(rank_dir(path, dist.rank))


def prepare_rank_dir(root: str | os.PathLike[str], dist: Distributed | None, framework: str) -> Path:
    """Where this process's trace goes: ``root`` itself for a single process (a directory holding
    a multi-rank trace is refused), else ``root/rank-NNNNN``, after writing ``root/ranks.json``
    (every rank writes the same, atomically; a single-process trace at ``root`` is refused)."""
    r = Path(root)
    if dist is None:
        if (r / RANKS_FILE).is_file():
            raise TraceExistsError(f"{r}: holds a multi-rank trace ({RANKS_FILE}); record a single process into "
                                   "another directory")
        return r
    if is_trace(r):
        raise TraceExistsError(f"{r}: a single-process trace is there; a multi-rank recording writes one trace per "
                               "rank under its directory: choose another --out")
    doc = {"format": RANKS_FORMAT, "version": 1, "world_size": dist.world_size, "launcher": dist.launcher,
           "launch_id": dist.launch_id, "framework": framework}
    path, tmp = r / RANKS_FILE, r / f".{RANKS_FILE}.{dist.rank}.tmp"
    try:
        r.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise TraceWriteError.from_os(path, "write the rank manifest", exc, "another --out") from exc
    return rank_dir(r, dist.rank)


def place_recording(root: str | os.PathLike[str], adapter: Adapter, meta: dict[str, Any], model: Any = None) -> Path:
    """Where a recording of ``adapter``'s model writes: under a launcher, ``root/rank-NNNNN``
    with meta ``distributed`` added to ``meta`` (with ``splits``, ``split_info``, when ``model``
    has sharded tensors); for a single process ``root``, unchanged."""
    dist = detect_distributed(adapter)
    if dist is not None:
        meta["distributed"] = dist.meta()
        splits = split_info(adapter, model, dist.world_size) if model is not None else {}
        if splits:
            meta["distributed"]["splits"] = splits
    return prepare_rank_dir(root, dist, adapter.name)


def local_shard(value: Any) -> Any:
    """What a rank holds of a distributed tensor (torch DTensor: its local shard, detached; the
    recorder records that); any other value as it is."""
    if getattr(type(value), "to_local", None) is None or getattr(value, "placements", None) is None:
        return value
    try:
        return value.detach().to_local()
    except Exception:  # a tensor subclass that only looks like one: recorded as it is
        return value


def split_info(adapter: Adapter, model: Any, world_size: int) -> dict[str, dict[str, Any]]:
    """How each of ``model``'s sharded parameters and buffers is split across the ranks, by name
    (``fc1.weight``): ``{"axis": k}`` (rank r holds the r-th slice along axis k), ``{"partial":
    True}`` (each rank holds a part of a sum), ``{"replicated": True}``, each with ``from`` saying
    where it was read: torch DTensor placements on a one-dimensional mesh of every rank, paddle's
    ``is_distributed`` and ``split_axis``. Tensors that say nothing are left out (their shapes
    tell ``padiff-trace join``)."""
    out: dict[str, dict[str, Any]] = {}
    for name, tensor, _ in adapter.named_state(model):
        info = _split_of(tensor, world_size)
        if info is not None:
            out[name] = info
    return out


def _split_of(t: Any, world_size: int) -> dict[str, Any] | None:
    placements = getattr(t, "placements", None)
    if placements is not None and getattr(type(t), "to_local", None) is not None:
        places = tuple(placements)
        text = f"DTensor {', '.join(map(repr, places))}"
        mesh = getattr(t, "device_mesh", None)
        size = mesh.size() if mesh is not None else None
        if len(places) != 1 or size != world_size:
            return {"from": f"{text} on a mesh of shape {tuple(mesh.shape) if mesh is not None else '?'} in a world of "
                    f"{world_size}: not read (one mesh axis over every rank only)"}
        p = places[0]
        if p.is_shard():
            return {"axis": int(p.dim), "from": text}
        if p.is_partial():
            return {"partial": True, "from": text}
        if p.is_replicate():
            return {"replicated": True, "from": text}
        return {"from": f"{text}: not read"}
    axis = getattr(t, "split_axis", None)
    if getattr(t, "is_distributed", False) is True and isinstance(axis, int) and not isinstance(axis, bool):
        return {"axis": axis, "from": "is_distributed, split_axis"}
    return None
