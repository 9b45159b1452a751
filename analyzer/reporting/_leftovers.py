"""Temporaries of report writes: whose they are, and finishing what a gone writer left.

Whose temporaries are whose. ``RUN`` is a random token of one write; the owner file
``.padiff-RUN.owner.tmp``, written first and removed last, names the writer: host name, Linux
boot id, PID namespace, PID and that process's start time. A later write finishes or removes a
run's temporaries only when the run is provably gone (same host, boot and PID namespace, and
that PID no longer runs with that start time: a reused PID does not count) or when they are
older than ``STALE_AFTER`` (24 h; a report takes minutes). A run in another container, boot or
machine cannot be checked, so its temporaries are left alone for those 24 hours. Finishing a
gone run: a swap whose report directory is missing gets its old directory back; an in-place
commit is rolled back, touching only files that are still the ones it put there.
``.FILE.PID.X.tmp`` files come from versions before owner files: only a PID is known of them,
so they keep that version's rule (removed when no process of that PID runs here).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import secrets
import shutil
import socket
import stat
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["STALE_AFTER", "Owner", "clean", "remove", "temp_path"]

log = logging.getLogger(__name__)

STALE_AFTER = 24 * 3600.0  # seconds after which temporaries of a writer we cannot check count as abandoned
_ARTIFACT = re.compile(r"^\.(?:(?P<name>.+)\.)?padiff-(?P<run>[0-9a-f]{16})\.(?P<kind>owner|commit|new|old)\.tmp$")
_LEGACY = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[^.]+\.tmp$")


@dataclass(frozen=True)
class Owner:
    """Who is writing: enough for another process to tell, later, whether this writer still runs."""

    run: str  # random token naming this write's temporaries
    host: str
    boot: str  # a PID means nothing in another boot ...
    pidns: str  # ... or in another PID namespace (another container)
    pid: int
    start: str  # clock ticks from boot to the process's start: a reused PID has another

    @classmethod
    def current(cls) -> Owner:
        pid = os.getpid()
        return cls(secrets.token_hex(8), socket.gethostname(), _read_text("/proc/sys/kernel/random/boot_id"),
                   _read_link("/proc/self/ns/pid"), pid, _process_start(pid) or "")

    def gone(self, me: Owner) -> bool:
        """Provably not running, as seen by ``me``: only from the same host, boot and PID namespace."""
        same_place = bool(self.boot and self.pidns) and (self.host, self.boot, self.pidns) == (me.host, me.boot, me.pidns)
        if not same_place or self.run == me.run:
            return False
        try:
            return _process_start(self.pid) != self.start
        except OSError:
            return False  # /proc hides it from us: it may run

    def dumps(self) -> str:
        return json.dumps({"run": self.run, "host": self.host, "boot": self.boot, "pidns": self.pidns,
                           "pid": self.pid, "start": self.start, "written": time.time()})

    @classmethod
    def loads(cls, text: str) -> Owner | None:
        """An owner file's contents; None when it is not one (a damaged file proves nothing)."""
        try:
            d = json.loads(text)
            return cls(str(d["run"]), str(d["host"]), str(d["boot"]), str(d["pidns"]), int(d["pid"]), str(d["start"]))
        except (ValueError, KeyError, TypeError):
            return None


def temp_path(directory: Path, name: str, run: str, kind: str) -> Path:
    return directory / (f".{name}.padiff-{run}.{kind}.tmp" if name else f".padiff-{run}.{kind}.tmp")


def remove(path: Path) -> None:
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass



# -- what abandoned writers left ---------------------------------------------------------------


def clean(directory: Path, me: Owner) -> None:
    """Finish or remove what gone writers left in ``directory``; never a running writer's."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    runs: dict[str, list[Path]] = {}
    for entry in entries:
        m = _ARTIFACT.match(entry.name)
        if m is not None:
            if m["run"] != me.run:
                runs.setdefault(m["run"], []).append(Path(entry.path))
        elif (legacy := _LEGACY.match(entry.name)) is not None:
            _clean_legacy(Path(entry.path), int(legacy["pid"]))
    for run, left in runs.items():
        try:
            _clean_run(directory, run, left, me)
        except OSError as exc:
            log.warning("%s: cannot clean up after an earlier report write (%s); left for a later one", directory, exc)


def _clean_run(directory: Path, run: str, left: list[Path], me: Owner) -> None:
    owner_file = temp_path(directory, "", run, "owner")
    try:
        owner = Owner.loads(owner_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        owner = None
    old = time.time() - _newest(left) > STALE_AFTER
    if not old and (owner is None or not owner.gone(me)):
        return  # running, or nothing proves it is not: another container's, a run just starting
    log.info("%s: finishing an abandoned report write (run %s)", directory, run)
    _finish(directory, run, left)
    for path in sorted(left, key=lambda p: p == owner_file):  # the owner file last
        remove(path)


def _finish(directory: Path, run: str, left: list[Path]) -> None:
    """Undo what an abandoned run left half done: a report directory it moved aside and never
    replaced comes back; an in-place commit is rolled back."""
    for path in left:
        m = _ARTIFACT.match(path.name)
        if m is not None and m["kind"] == "old" and m["name"] and path.is_dir() and not path.is_symlink():
            target = directory / m["name"]
            if not os.path.lexists(target):
                os.rename(path, target)
                log.warning("%s: restored the previous report an interrupted write had moved aside", target)
    commit = temp_path(directory, "", run, "commit")
    if commit in left:
        _roll_back(directory, run, commit)


def _roll_back(directory: Path, run: str, commit: Path) -> None:
    try:
        staged = json.loads(commit.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return  # written before any rename, and synced: unreadable means nothing was renamed
    if not isinstance(staged, dict):
        return
    for name, inode in staged.items():
        if not plain_name(name):
            continue
        target, backup = directory / name, temp_path(directory, name, run, "old")
        try:
            ours = os.lstat(target).st_ino == inode
        except FileNotFoundError:
            continue
        if not ours:
            continue  # never renamed, or replaced since by a later write: not ours to undo
        if os.path.lexists(backup):
            os.replace(backup, target)
        else:
            os.unlink(target)
        log.warning("%s: put back the previous version an interrupted write had replaced", target)


def plain_name(name: object) -> bool:
    """A journal names files of its own directory only (never ``..`` or a path)."""
    return isinstance(name, str) and name not in ("", ".", "..") and "/" not in name and (os.altsep or "/") not in name


def _newest(paths: list[Path]) -> float:
    newest = 0.0
    for path in paths:
        with contextlib.suppress(OSError):
            newest = max(newest, os.lstat(path).st_mtime)
    return newest


def _clean_legacy(path: Path, pid: int) -> None:
    """A temporary file of a version before owner files: only its PID is known, so that version's
    rule stays (removed when no process of that PID runs here), and the age rule."""
    try:
        st = os.lstat(path)
    except OSError:
        return
    if stat.S_ISREG(st.st_mode) and (time.time() - st.st_mtime > STALE_AFTER or not _pid_runs(pid)):
        with contextlib.suppress(OSError):
            os.unlink(path)


def _pid_runs(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process
    return True


def _process_start(pid: int) -> str | None:
    """Start time of process ``pid`` in clock ticks after boot (Linux ``/proc``); None when there is
    no such process, or only its zombie. Other failures (``/proc`` hidden) raise ``OSError``."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # after the command name, which may hold spaces
    return None if fields[0] in ("Z", "X") else fields[19]


def _read_text(path: str) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return ""


def _read_link(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""
