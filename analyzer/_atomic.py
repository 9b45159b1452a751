"""Replacing files atomically: a reader sees the old file or the new one, never a torn one."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from padiff_trace import TraceWriteError

__all__ = ["write_atomic"]


def write_atomic(out: Path, files: dict[str, str]) -> Path:
    """Write ``{file name: text}`` into directory ``out``: each to a temporary file there, synced,
    then all renamed over the old ones. On any error nothing is replaced and no temporary stays."""
    temps: dict[str, str] = {}
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=out)
            temps[name] = tmp
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                os.fchmod(f.fileno(), _mode(out / name))
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
        for name, tmp in list(temps.items()):
            os.replace(tmp, out / name)
            del temps[name]
        _sync_dir(out)
    except OSError as exc:
        raise TraceWriteError(f"{out}: cannot write the report: {exc.strerror or exc}") from exc
    finally:
        for tmp in temps.values():
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return out


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
