"""Replacing files atomically: a reader sees the old file or the new one, never a torn one.

Each file is written (streamed) to a temporary name beside its target, synced, and renamed
over the target only once every file of the set is written. Temporary names carry the
writer's pid: ones left by a killed writer (SIGKILL leaves them) are removed by the next
write into the same directory, and never ones of a writer still running.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from padiff_trace import TraceWriteError

__all__ = ["write_atomic", "write_atomic_streams"]

Writer = Callable[[TextIO], None]
_TEMP = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[^.]+\.tmp$")


def write_atomic(out: Path, files: dict[str, str]) -> Path:
    """Write ``{file name: text}`` into directory ``out`` (see ``write_atomic_streams``)."""
    return write_atomic_streams(out, {name: _text(text) for name, text in files.items()})


def _text(text: str) -> Writer:
    def write(f: TextIO) -> None:
        f.write(text)

    return write


def write_atomic_streams(out: Path, files: dict[str, Writer]) -> Path:
    """Write ``{file name: writer}`` into directory ``out``: each writer streams its file into a
    temporary file there, synced; then all are renamed over the old ones. On any error (a full
    disk, a writer's exception) nothing is replaced and no temporary file stays."""
    temps: dict[str, str] = {}
    try:
        out.mkdir(parents=True, exist_ok=True)
        _remove_stale(out)
        for name, write in files.items():
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.{os.getpid()}.", suffix=".tmp", dir=out)
            temps[name] = tmp
            with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace", newline="") as f:
                os.fchmod(f.fileno(), _mode(out / name))
                write(f)
                f.flush()
                os.fsync(f.fileno())
        for name, tmp in list(temps.items()):
            os.replace(tmp, out / name)
            del temps[name]
        _sync_dir(out)
    except OSError as exc:
        raise TraceWriteError.from_os(out, "write the report", exc, "another --report directory (the previous report is unchanged)") from exc
    finally:
        for tmp in temps.values():
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return out


def _remove_stale(out: Path) -> None:
    """Remove temporary files that writers no longer running left in ``out``."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(out):
            m = _TEMP.match(entry.name)
            if m is None or not entry.is_file(follow_symlinks=False) or _alive(int(m["pid"])):
                continue
            with contextlib.suppress(OSError):
                os.unlink(entry.path)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process: leave its files
    return True


def _mode(target: Path) -> int:
    """The permissions of the file being replaced; a new file gets rw-r--r--."""
    try:
        return target.stat().st_mode & 0o777
    except OSError:
        return 0o644


def _sync_dir(path: Path) -> None:
    """Make the renames durable (a directory fsync; not every platform has one)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
