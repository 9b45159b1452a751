"""The files of a trace directory: its shards (exact names only), the writer's lock, and what
an overwrite may remove.

One writer per directory: ``DirLock`` holds ``.padiff-trace.lock`` with ``fcntl.flock`` (it
does not depend on HDF5 file locking, and the kernel drops it when the writer dies). A lock
left by a dead writer is taken over: the flock is free, or its recorded pid is gone (a forked
child may have inherited the flock). Where ``flock`` is unsupported, ``O_EXCL`` creation and
the pid's liveness decide.
"""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import socket
import stat
import time
from pathlib import Path

import h5py

from .._errors import HostileTraceError, TraceExistsError, TraceLockedError, TraceReadError, TraceWriteError, os_failure
from ._closed import check_format_attrs
from ._schema import FORMAT_NAME, LOCK_NAME, PART_RE, SHARD_RE

__all__ = ["DirLock", "clear_for_overwrite", "lock_holder", "remove_trace", "shard_files", "shard_number"]

logger = logging.getLogger(__name__)
_HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"


def shard_number(name: str) -> int | None:
    """The number of a shard file named exactly ``shard-NNNNNN.h5``, else None."""
    m = SHARD_RE.fullmatch(name)
    return int(m.group(1)) if m else None


def shard_files(directory: Path) -> list[Path]:
    """The shard files of a trace directory, by number; other names (``backup-shard-000001.h5``,
    ``shard-1.h5``, ``*.part``) are not part of the trace. ``TraceReadError`` when this user
    may not list the directory or read one of them (not damage: the files may be fine)."""
    try:
        # not only regular files: a FIFO or device named like a shard is refused by name when
        # opened (never opened), not skipped as if it were not there
        found = [(n, p) for p in directory.iterdir() if (n := shard_number(p.name)) is not None and not p.is_dir()]
    except PermissionError as exc:
        raise TraceReadError(f"{directory}: cannot list the trace: {exc.strerror}; {_READ_ADVICE}") from None
    shards = [p for _, p in sorted(found)]
    for p in shards:
        _check_readable(p)
    return shards


_READ_ADVICE = "ask its owner for read access (chmod -R a+rX on the trace) or run as a user who may read it"


def _check_readable(path: Path) -> None:
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return  # a FIFO or a device is never opened (opening one may block or act): the reader refuses it
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))  # swapped for a FIFO since: no wait
    except PermissionError as exc:
        raise TraceReadError(f"{path}: cannot read this shard: {exc.strerror}; {_READ_ADVICE}") from None
    except OSError:
        pass  # gone or damaged: the reader reports it


def _is_our_shard(path: Path) -> bool:
    """An HDF5 file whose ``format`` attribute is padiff-trace's (read-only look)."""
    try:
        with open(path, "rb") as fh:
            if fh.read(8) != _HDF5_MAGIC:
                return False
        with h5py.File(path, "r") as f:
            check_format_attrs(f, path)  # a huge or odd attribute is not ours: never read
            fmt = f.attrs.get("format")
        return (fmt.decode("utf-8", "replace") if isinstance(fmt, bytes) else str(fmt)) == FORMAT_NAME
    except (OSError, ValueError, KeyError, HostileTraceError):
        return False


def _is_our_part(path: Path) -> bool:
    """An unfinished shard of a killed writer: empty (killed at creation) or an HDF5 file."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
    except OSError:
        return False
    return head in (b"", _HDF5_MAGIC)


def clear_for_overwrite(directory: Path, overwrite: bool) -> list[Path]:
    """Make room for a new recording in ``directory`` (the caller holds its lock): remove the
    shards of an earlier trace (exact names, verified to be padiff-trace files) and unfinished
    ``.part`` shards. Anything else stays; a file that takes a shard's name but is not one
    makes this refuse (the new trace would overwrite it). Returns the removed paths."""
    ours: list[Path] = []
    foreign: list[Path] = []
    for p in sorted(directory.iterdir()):
        if SHARD_RE.fullmatch(p.name):
            (ours if p.is_file() and _is_our_shard(p) else foreign).append(p)
        elif PART_RE.fullmatch(p.name):
            (ours if p.is_file() and _is_our_part(p) else foreign).append(p)
    if foreign:
        names = ", ".join(p.name for p in foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        raise TraceExistsError(
            f"{directory}: {names} {'is' if len(foreign) == 1 else 'are'} named like a shard but not a "
            "padiff-trace shard; not touching it (move it away or choose another directory)"
        )
    if ours and not overwrite:
        raise TraceExistsError(f"{directory}: a trace already exists here (pass overwrite=True to replace it)")
    for p in ours:
        p.unlink()
    return ours


def remove_trace(directory: Path, overwrite: bool) -> list[Path]:
    """``clear_for_overwrite`` under the directory's writer lock (refused while a writer runs):
    for callers that must remove an earlier trace before the process that writes the new
    one starts (``run --concurrent``). Returns the removed paths."""
    if not directory.is_dir():
        return []
    lock = DirLock(directory, "")
    lock.acquire()
    try:
        return clear_for_overwrite(directory, overwrite)
    finally:
        lock.release()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    except OSError:
        return True
    return True


def _read_owner(path: Path) -> dict[str, object]:
    try:
        owner = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}
    return owner if isinstance(owner, dict) else {}


def _stale(owner: dict[str, object]) -> bool:
    """The lock's recorded writer is known dead: same host, pid gone."""
    pid = owner.get("pid")
    return owner.get("host") == socket.gethostname() and isinstance(pid, int) and pid != os.getpid() and not _alive(pid)


def lock_holder(directory: Path) -> int | None:
    """The pid of a live writer of ``directory`` (this host), None if none is known."""
    owner = _read_owner(directory / LOCK_NAME)
    pid = owner.get("pid")
    if not isinstance(pid, int) or owner.get("host") != socket.gethostname() or not _alive(pid):
        return None
    return pid


class DirLock:
    """The exclusive right to write one trace directory."""

    def __init__(self, directory: Path, recording: str) -> None:
        self.path = directory / LOCK_NAME
        self._recording = recording
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise ``TraceLockedError``; ``TraceWriteError`` if the directory is not
        writable (creating the lock file is the write probe)."""
        try:
            for _ in range(20):
                if self._try_flock():
                    return
        except TraceLockedError:
            raise
        except PermissionError as exc:
            if self.path.exists():  # another user's lock (stale or live) we may not even open
                raise TraceLockedError(self._foreign_message(exc)) from exc
            raise TraceWriteError(f"{self.path.parent}: cannot write the trace here: {os_failure(exc)}") from exc
        except OSError as exc:
            self.release()  # a lock file created before the failing write (a full disk) is ours: remove it
            raise TraceWriteError(f"{self.path.parent}: cannot write the trace here: {os_failure(exc)}") from exc
        raise TraceLockedError(f"{self.path.parent}: cannot take the writer lock {self.path} (it keeps changing)")

    def _try_flock(self) -> bool:
        """One attempt; True when held. Falls back to ``O_EXCL`` where flock is unsupported."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            owner = _read_owner(self.path)
            if _stale(owner):  # its writer is dead; a forked child of it still holds the flock
                logger.warning("%s: removing the lock of writer pid %s (not running)", self.path, owner.get("pid"))
                self._unlink_if_same(owner)
                return False
            raise TraceLockedError(self._busy_message(owner)) from None
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
                return self._try_excl()
            raise
        try:
            same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
        except FileNotFoundError:
            same = False
        if not same:  # the previous holder removed the file between our open and flock
            os.close(fd)
            return False
        owner = _read_owner(self.path)
        if owner.get("pid"):
            logger.info("%s: taking over the lock of writer pid %s (no longer holds it)", self.path, owner.get("pid"))
        self._fd = fd
        self._write_owner(fd)
        return True

    def _try_excl(self) -> bool:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            owner = _read_owner(self.path)
            if _stale(owner) or (not owner and self._old(self.path)):
                logger.warning("%s: removing the lock of writer pid %s (not running)", self.path, owner.get("pid"))
                self._unlink_if_same(owner)
                return False
            raise TraceLockedError(self._busy_message(owner)) from None
        self._fd = fd
        self._write_owner(fd)
        return True

    def _foreign_message(self, exc: OSError) -> str:
        """The lock file belongs to someone this process may not override: name it and them."""
        try:
            uid = self.path.stat().st_uid
        except OSError:
            uid = -1
        try:
            import pwd

            user = pwd.getpwuid(uid).pw_name
        except (ImportError, KeyError):
            user = f"uid {uid}"
        owner = _read_owner(self.path)
        pid = f", writer pid {owner.get('pid')} on {owner.get('host', '?')}" if owner.get("pid") else ""
        return (f"{self.path.parent}: the writer lock {self.path} belongs to user {user}{pid} and cannot be taken "
                f"({os_failure(exc)}); record into another directory, or ask {user} to remove the lock if that "
                "recording is over")

    @staticmethod
    def _old(path: Path) -> bool:
        """An empty lock file (a writer killed between creating and filling it) older than 60 s."""
        try:
            return time.time() - path.stat().st_mtime > 60
        except OSError:
            return True

    def _unlink_if_same(self, owner: dict[str, object]) -> None:
        if _read_owner(self.path) == owner:
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass

    def _write_owner(self, fd: int) -> None:
        info = {"pid": os.getpid(), "host": socket.gethostname(), "recording": self._recording,
                "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        data = json.dumps(info).encode("utf-8")
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)

    def _busy_message(self, owner: dict[str, object]) -> str:
        who = f"pid {owner.get('pid', '?')} on {owner.get('host', '?')}"
        if owner.get("pid") == os.getpid() and owner.get("host") == socket.gethostname():
            who = "another TraceWriter of this process"
        return (
            f"{self.path.parent}: another writer ({who}) is writing this trace; "
            f"if none is running, delete {self.path}"
        )

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            if os.fstat(fd).st_ino == os.stat(self.path).st_ino:
                self.path.unlink()
        except OSError:
            pass
        os.close(fd)
