"""The file steps of an atomic report write (``_atomic``): files streamed to their staging names
and synced with the permissions of the files they replace, new files written exclusively,
directories synced, old files hard-linked (copied where a file system has no links), and a
run's temporaries dropped, its owner file last.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from ._leftovers import remove

__all__ = ["NO_LINK", "Writer", "drop", "link_or_copy", "stage", "sync_dir", "write_new"]

log = logging.getLogger(__name__)

Writer = Callable[[TextIO], None]
NO_LINK = frozenset({errno.EPERM, errno.EACCES, errno.EMLINK, errno.EXDEV, errno.EOPNOTSUPP, errno.ENOTSUP})


def link_or_copy(src: str | Path, dst: str | Path) -> None:
    try:
        os.link(src, dst)
    except OSError as exc:
        if exc.errno not in NO_LINK:
            raise
        shutil.copy2(src, dst, follow_symlinks=False)


def stage(files: dict[str, Writer], into: Callable[[str], Path], like: Path) -> dict[str, int]:
    """Stream each file to ``into(name)``, synced, with the permissions of ``like / name``;
    returns each file's inode number (the commit journal tells our files from others by it)."""
    inodes: dict[str, int] = {}
    for name, write in files.items():
        fd = os.open(into(name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace", newline="") as f:
            os.fchmod(f.fileno(), _mode(like / name))
            write(f)
            f.flush()
            os.fsync(f.fileno())
            inodes[name] = os.fstat(f.fileno()).st_ino
    return inodes


def write_new(path: Path, text: str, sync: bool) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
        if sync:
            f.flush()
            os.fsync(f.fileno())


def drop(paths: list[Path], owner: Path) -> None:
    """Remove a run's temporaries, the owner file last; what cannot be removed keeps the owner
    file, so a later write removes it once this process is gone."""
    for path in paths:
        try:
            remove(path)
        except OSError as exc:
            log.warning("%s: cannot remove this temporary (%s); a later report write will", path, exc)
            return
    with contextlib.suppress(OSError):
        os.unlink(owner)


def _mode(target: Path) -> int:
    """The permissions of the file being replaced; a new file gets rw-r--r--."""
    try:
        return target.stat().st_mode & 0o777
    except OSError:
        return 0o644


def sync_dir(path: Path) -> None:
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
