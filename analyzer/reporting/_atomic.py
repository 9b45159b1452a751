"""Replacing a report's files all together: after a write, failed or not, every file is the old
version or every file is the new one, never a mix.

Two ways, chosen per target:

* ``write_report_dir`` (a report directory): the files are streamed into a fresh sibling
  directory ``.DIR.padiff-RUN.new.tmp`` (same parent: the renames stay on one file system),
  synced, and given hard links to what else the old directory holds (notes, a single-step
  report; nothing copied, nothing lost). Then the two directories swap names in one step
  (Linux ``renameat2(RENAME_EXCHANGE)``: the report directory never goes missing) and the old
  one is removed; where the system cannot swap, the old directory is renamed aside
  (``.DIR.padiff-RUN.old.tmp``) and the new one into its place. The old directory is never
  written to, so a failure at any step puts it back by one rename, exactly as it was. A report file that is a directory in the old report is refused before anything
  is written (the swap would silently delete what that directory holds).
* ``write_atomic_streams`` (in place: used where a directory cannot be swapped: the current
  directory or one holding it, a mount point, a root, one whose parent this user may not
  write, one made read-only; and for single files such as ``--html FILE``): each file is
  staged beside its target as ``.FILE.padiff-RUN.new.tmp``. With more than one file, each old
  file is first hard-linked to ``.FILE.padiff-RUN.old.tmp`` and a commit journal
  (``.padiff-RUN.commit.tmp``: the inode of every staged file) is synced before any rename; a
  rename that fails puts back every file replaced before it (a name that was new is removed).

Whose temporaries are whose, and finishing what a gone writer left: ``_leftovers``; the file
steps both ways share (staging, syncing, linking, dropping a run's temporaries): ``_staging``.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import logging
import os
import shutil
import stat
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import TextIO

from padiff_trace import TraceWriteError, os_failure

from ._leftovers import Owner, clean, temp_path
from ._staging import drop, link_or_copy, stage, sync_dir, write_new

__all__ = ["write_atomic", "write_atomic_streams", "write_report_dir"]

log = logging.getLogger(__name__)

Writer = Callable[[TextIO], None]
_WHERE = "another --report directory (the previous report is unchanged)"
_AT_FDCWD = -100  # <fcntl.h>: paths relative to the current directory
_RENAME_EXCHANGE = 2  # <linux/fs.h>


class _LeftForRecovery(TraceWriteError):
    """A failure that could not be undone in this process: the run's owner file stays, so the next
    write into the same place finishes the undo once this process has exited."""


def write_atomic(out: Path, files: dict[str, str]) -> Path:
    """Write ``{file name: text}`` into directory ``out`` (see ``write_atomic_streams``)."""
    return write_atomic_streams(out, {name: _text(text) for name, text in files.items()})


def _text(text: str) -> Writer:
    def write(f: TextIO) -> None:
        f.write(text)

    return write


def write_atomic_streams(out: Path, files: dict[str, Writer]) -> Path:
    """Write ``{file name: writer}`` into directory ``out``, in place (module docstring): other
    files there stay. On any error (a full disk, a writer's exception, a refused rename) the old
    files are as they were and no temporary file stays; an ``OSError`` becomes ``TraceWriteError``."""
    me = Owner.current()
    with _as_write_error(out):
        out.mkdir(parents=True, exist_ok=True)
        clean(out, me)
        _in_place(out, files, me, out)
    return out


def write_report_dir(out: Path, files: dict[str, Writer]) -> Path:
    """Write ``{file name: writer}`` as the report directory ``out`` by swapping directories, or in
    place where ``out`` cannot be swapped (module docstring); a symbolic link is followed and kept.
    On any error the previous report is exactly as it was and ``TraceWriteError`` says what to do."""
    me = Owner.current()
    with _as_write_error(out):
        real = Path(os.path.realpath(out))
        real.parent.mkdir(parents=True, exist_ok=True)
        clean(real.parent, me)  # first: it may give back a report directory an abandoned swap took away
        if real.exists() and not real.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(out))
        if real.is_dir():
            clean(real, me)  # before the swap hard-links the rest of the directory into the new one
        blocker = _swap_blocker(real)
        if blocker is None:
            _swap(real, files, me, out)
        else:
            log.debug("%s: report written in place: %s", out, blocker)
            real.mkdir(exist_ok=True)
            _in_place(real, files, me, out)
    return out


@contextlib.contextmanager
def _as_write_error(shown: Path) -> Iterator[None]:
    try:
        yield
    except TraceWriteError:
        raise
    except OSError as exc:
        raise TraceWriteError.from_os(shown, "write the report", exc, _WHERE) from exc


# -- swapping directories ---------------------------------------------------------------------


def _swap_blocker(out: Path) -> str | None:
    """Why the report directory ``out`` (a resolved path) cannot be replaced by renames; None: it can."""
    if out.parent == out:
        return "it is a root directory"
    if not os.access(out.parent, os.W_OK | os.X_OK):
        return "its parent directory is not writable"
    if not out.exists():
        return None
    if os.path.ismount(out):
        return "it is a mount point"
    if not os.access(out, os.W_OK | os.X_OK):
        return "it is not writable"  # a report made read-only stays read-only (the swap would ignore that)
    try:
        cwd = Path.cwd()
    except OSError:
        cwd = None
    if cwd is not None and (cwd == out or out in cwd.parents):
        return "it holds the current directory"  # swapped away, the process would stand in a deleted directory
    if _sticky_forbids(out):
        return "its parent is sticky and the directory is another user's"
    return None


def _sticky_forbids(out: Path) -> bool:
    """In a sticky directory (/tmp) only the owners of a directory or of its parent may rename it."""
    parent = os.stat(out.parent)
    return bool(parent.st_mode & stat.S_ISVTX) and os.geteuid() not in (0, parent.st_uid, os.stat(out).st_uid)


def _swap(out: Path, files: dict[str, Writer], me: Owner, shown: Path) -> None:
    parent = out.parent
    new, aside = temp_path(parent, out.name, me.run, "new"), temp_path(parent, out.name, me.run, "old")
    owner = temp_path(parent, "", me.run, "owner")
    _refuse_directories(out, files, shown)
    write_new(owner, me.dumps(), sync=False)  # lost in a crash, the age rule still removes what it owned
    keep = False
    try:
        os.mkdir(new)
        stage(files, lambda name: new / name, out)
        _carry(out, new, files)
        _match_directory(new, out)
        sync_dir(new)
        _exchange(out, new, aside, shown)
    except _LeftForRecovery:
        keep = True
        raise
    finally:
        if not keep:
            drop([new, aside], owner)


def _refuse_directories(out: Path, names: Collection[str], shown: Path) -> None:
    for name in names:
        if (out / name).is_dir() and not (out / name).is_symlink():
            raise _in_the_way(shown / name)


def _in_the_way(path: Path) -> TraceWriteError:
    return TraceWriteError(f"{path}: is a directory where the report writes a file; move it away or choose {_WHERE}")


def _exchange(out: Path, new: Path, aside: Path, shown: Path) -> None:
    """Put ``new`` in the place of ``out``; on a failure ``out`` is back as it was. Where the
    kernel swaps two names in one step (Linux ``renameat2(RENAME_EXCHANGE)``), the report
    directory never goes missing, not even for a process killed mid-swap: ``new`` then names
    the old report, removed with the other temporaries. Elsewhere two renames, and a kill
    between them leaves the old report aside, put back by the next write (``_leftovers``)."""
    had_old = out.exists()
    if had_old and _swap_names(new, out):
        sync_dir(out.parent)
        return
    if had_old:
        os.rename(out, aside)
    try:
        os.rename(new, out)
    except OSError:
        if had_old:
            _put_back(aside, out, shown)
        raise
    sync_dir(out.parent)


def _swap_names(a: Path, b: Path) -> bool:
    """Exchange two paths atomically; False where the system cannot (no ``renameat2``, or a
    file system that refuses the flag): the caller falls back to two renames."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    renameat2.restype = ctypes.c_int
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _put_back(aside: Path, out: Path, shown: Path) -> None:
    try:
        os.rename(aside, out)
    except OSError as exc:
        raise _LeftForRecovery(
            f"{shown}: cannot write the report, nor put the previous one back ({os_failure(exc)}); "
            f"it is whole in {aside}: rename that to {shown}") from None  # the whole line: the CLI shows it as is


def _carry(old: Path, new: Path, skip: Collection[str]) -> None:
    """Give the new report directory what else the old one holds, as hard links (copies where a
    file system has none): nothing the user keeps there is lost by the swap."""
    try:
        entries = list(os.scandir(old))
    except FileNotFoundError:
        return
    for entry in entries:
        if entry.name in skip:
            continue
        src, dst = Path(entry.path), new / entry.name
        if entry.is_symlink():
            os.symlink(os.readlink(src), dst)
        elif entry.is_dir(follow_symlinks=False):
            shutil.copytree(src, dst, symlinks=True, copy_function=link_or_copy)
        else:
            link_or_copy(src, dst)


def _match_directory(new: Path, old: Path) -> None:
    """The new report directory gets the old one's permissions (and owner, where we may set it)."""
    try:
        st = os.stat(old)
    except FileNotFoundError:
        return  # a first report: the umask decided, as for any new directory
    mine = os.stat(new)
    if (mine.st_uid, mine.st_gid) != (st.st_uid, st.st_gid):
        with contextlib.suppress(PermissionError):
            os.chown(new, st.st_uid, st.st_gid)
    os.chmod(new, stat.S_IMODE(st.st_mode))  # after chown, which may clear set-id bits


# -- in place -----------------------------------------------------------------------------------


def _in_place(out: Path, files: dict[str, Writer], me: Owner, shown: Path) -> None:
    run = me.run
    owner = temp_path(out, "", run, "owner")
    write_new(owner, me.dumps(), sync=False)
    leftovers = [temp_path(out, n, run, kind) for n in files for kind in ("new", "old")] + [temp_path(out, "", run, "commit")]
    keep = False
    try:
        staged = stage(files, lambda name: temp_path(out, name, run, "new"), out)
        _commit(out, staged, run, shown)
    except _LeftForRecovery:
        keep = True
        raise
    finally:
        if not keep:
            drop(leftovers, owner)


def _commit(out: Path, staged: dict[str, int], run: str, shown: Path) -> None:
    """Rename the staged files over the old ones; a failed rename undoes those before it."""
    backups: set[str] = set()
    if len(staged) > 1:  # one rename is atomic by itself
        backups = _back_up(out, staged, run)
        write_new(temp_path(out, "", run, "commit"), json.dumps(staged), sync=True)
        sync_dir(out)
    replaced: list[str] = []
    for name in staged:
        try:
            os.replace(temp_path(out, name, run, "new"), out / name)
        except OSError as exc:
            if not _undo(out, run, replaced, backups):
                raise _LeftForRecovery(
                    f"{shown}: cannot write the report ({os_failure(exc)}), and files replaced before the failure "
                    f"could not be put back; the next report written into {shown} puts them back") from None
            if isinstance(exc, IsADirectoryError):
                raise _in_the_way(shown / name) from None  # the whole line: the CLI shows it as is
            raise
        replaced.append(name)
    sync_dir(out)


def _back_up(out: Path, names: Collection[str], run: str) -> set[str]:
    """Hard-link each old file to its backup name; the names that had an old file."""
    kept: set[str] = set()
    for name in names:
        try:
            st = os.lstat(out / name)
        except FileNotFoundError:
            continue
        if stat.S_ISDIR(st.st_mode):
            continue  # the rename onto it fails, and what was replaced before it is put back
        link_or_copy(out / name, temp_path(out, name, run, "old"))
        kept.add(name)
    return kept


def _undo(out: Path, run: str, replaced: list[str], backups: set[str]) -> bool:
    """Put the old files back over the ``replaced`` ones (remove those that had none); all done?"""
    done = True
    for name in reversed(replaced):
        try:
            if name in backups:
                os.replace(temp_path(out, name, run, "old"), out / name)
            else:
                os.unlink(out / name)
        except OSError as exc:
            log.error("%s: cannot put the previous %s back: %s", out, name, exc)
            done = False
    sync_dir(out)
    return done
