"""The exception tree of padiff-trace.

    PadiffTraceError                      every error this project raises on purpose
    ├── UserError                         bad input: one line, no traceback, CLI exit 2
    │   ├── TraceNotFoundError            (also FileNotFoundError)
    │   ├── NotATraceError                a file that is not a padiff-trace trace
    │   ├── CorruptTraceError             truncated or damaged shard
    │   │   ├── DamagedRecordError        one record's data or index row fails its checks
    │   │   └── HostileTraceError         a shard refers outside itself or claims what it does not hold
    │   ├── TraceChangedError             shard files replaced under an open reader
    │   │   └── ShardChangedError         (also CorruptTraceError) a read failed: the file shrank or was rewritten in place
    │   ├── UnsupportedVersionError       written by a newer padiff-trace
    │   ├── TraceExistsError              (also FileExistsError) refusing to overwrite
    │   │   └── TraceLockedError          another live writer holds the directory
    │   ├── SpecError                     a spec file breaks the contract
    │   ├── FilterError                   (also ValueError) unknown kind/phase in a filter
    │   ├── MappingError                  a mapping file is invalid or matches nothing
    │   ├── WeightTransferError           weights cannot be matched onto a model
    │   ├── TraceWriteError               (also OSError) disk full, read-only or unwritable output
    │   └── TraceReadError                (also OSError) a trace file exists but may not be read
    ├── RecordingFailedError              a recorder child process of ``run`` failed (exit_code)
    └── InternalError                     a bug in padiff-trace: reported with traceback

Every message names the file or record concerned and, for mismatches, both sides; an
operating-system failure (``os_failure``) also says what to do about it.
"""

from __future__ import annotations

import errno
import os
import re
from typing import Self

__all__ = [
    "CorruptTraceError",
    "DamagedRecordError",
    "FilterError",
    "HostileTraceError",
    "InternalError",
    "MappingError",
    "NotATraceError",
    "PadiffTraceError",
    "RecordingFailedError",
    "ShardChangedError",
    "SpecError",
    "TraceChangedError",
    "TraceExistsError",
    "TraceLockedError",
    "TraceNotFoundError",
    "TraceReadError",
    "TraceWriteError",
    "UnsupportedVersionError",
    "UserError",
    "WeightTransferError",
    "os_errno",
    "exit_reason",
    "interrupted",
    "os_failure",
]


class PadiffTraceError(Exception):
    """Base of every error padiff-trace raises on purpose."""


# What a message says in Python terms, and how the command line says the same: messages are
# written for the Python API; ``UserError.cli_text`` gives the command line's words.
_CLI_WORDS = (("overwrite=True", "--force"), ("force=True", "--force"), ("mapping=FILE", "--mapping FILE"))


class UserError(PadiffTraceError):
    """The user's input or environment is wrong; shown as one line, CLI exits with 2. The
    message speaks the Python API (``force=True``); ``cli_text`` the command line (``--force``)."""

    def cli_text(self) -> str:
        """The message as the command line prints it (its flags for the Python keywords)."""
        text = str(self)
        for python, flag in _CLI_WORDS:
            text = text.replace(python, flag)
        return text

    @classmethod
    def from_os(cls, path: object, doing: str, exc: BaseException, where: str = "another output directory") -> Self:
        """``{path}: cannot {doing}: {the system's words: meaning}; {next step}`` for an ``OSError``
        (also one HDF5 raised); ``where``: what to offer instead (``another --report``)."""
        return cls(f"{path}: cannot {doing}: {os_failure(exc, where)}")


class TraceNotFoundError(UserError, FileNotFoundError):
    """The trace path does not exist."""


class NotATraceError(UserError):
    """The path exists but is not a padiff-trace trace."""


class CorruptTraceError(UserError):
    """A shard of the trace is truncated or damaged."""


class DamagedRecordError(CorruptTraceError):
    """Reading one record failed an integrity check; the rest of the trace stays readable.

    ``path`` is the shard file, ``seq`` the record, ``reason`` what failed."""

    def __init__(self, message: str, path: str = "", seq: int = -1, reason: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.seq = seq
        self.reason = reason


class HostileTraceError(CorruptTraceError):
    """A shard holds what the writer never makes and a reader must not follow: a link, external
    storage or virtual data outside the file, an unknown filter, a FIFO or device as the shard,
    an object or attribute claiming more bytes than the file holds. Refused before any byte is
    read through it (``padiff_trace.trace._closed``)."""


class TraceChangedError(UserError):
    """A shard file was replaced or modified while a reader had the trace open."""


class ShardChangedError(TraceChangedError, CorruptTraceError):
    """A read failed because its shard was truncated or rewritten in place after the trace was
    opened (``cp`` or ``rsync --inplace`` over it): the trace changed, its bytes are not damaged.
    Also a ``CorruptTraceError``: what was read cannot be trusted, as for damage."""


class UnsupportedVersionError(UserError):
    """The trace was written in a format version newer than this reader."""


class TraceExistsError(UserError, FileExistsError):
    """Refusing to overwrite an existing trace."""


class TraceLockedError(TraceExistsError):
    """Another writer (a live process) is writing this trace directory."""


class SpecError(UserError):
    """A spec file does not follow the contract (model(), inputs(), ...)."""


class FilterError(UserError, ValueError):
    """An unknown kind or phase name was given to ``Trace.select``."""


class MappingError(UserError):
    """A mapping file is malformed or one of its entries matches nothing."""


class WeightTransferError(UserError):
    """Weights from a trace cannot be matched onto the model."""


class TraceWriteError(UserError, OSError):
    """Writing a trace or a report failed (disk full, read-only, permissions): the environment,
    not the model; what was flushed before stays readable."""


class TraceReadError(UserError, OSError):
    """A file or directory of a trace exists but this user may not read it."""


class RecordingFailedError(PadiffTraceError):
    """A recorder child process failed; the message carries the child's own one-line error (held
    back from the terminal, so the failure is reported once). ``exit_code``: the CLI's
    exit status: always 2 (nothing was compared; exit 1 means a divergence was found)."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class InternalError(PadiffTraceError):
    """A bug in padiff-trace itself."""


# errno -> (what it means, what to do); ``{where}`` is the output to choose instead
_ADVICE: dict[int, tuple[str, str]] = {
    errno.ENOSPC: ("the disk is full", "free space or choose {where}"),
    errno.EDQUOT: ("the disk quota is used up", "free space or choose {where}"),
    errno.EFBIG: ("the file is too large for this file system", "choose {where}"),
    errno.EROFS: ("", "choose {where}"),
    errno.EACCES: ("", "choose {where} or ask for access"),
    errno.EPERM: ("", "choose {where} or ask for access"),
    errno.EIO: ("", "check the disk, then try again or choose {where}"),
}
_ERRNO_TEXT = re.compile(r"errno\s*=\s*(\d+)|\[Errno (\d+)\]")


def os_errno(exc: BaseException | None) -> int | None:
    """The errno behind ``exc`` or an exception it was raised from (HDF5 puts it in its text)."""
    seen = 0
    while exc is not None and seen < 8:
        code = getattr(exc, "errno", None)
        if isinstance(code, int) and code > 0:
            return code
        m = _ERRNO_TEXT.search(str(exc))
        if m:
            return int(m.group(1) or m.group(2))
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


def os_failure(exc: BaseException, where: str = "another output directory") -> str:
    """One line for a failed write: the system's words, what they mean and the next step, e.g.
    ``No space left on device: the disk is full; free space or choose another output directory``.
    ``where``: the alternative to offer (``another --report``)."""
    code = os_errno(exc)
    if code is None:
        text = str(exc).strip().splitlines()
        name = "" if isinstance(exc, PadiffTraceError) else f"{type(exc).__name__}: "
        return f"{name}{text[0][:200]}" if text else type(exc).__name__
    meaning, advice = _ADVICE.get(code, ("", ""))
    words = os.strerror(code) + (f": {meaning}" if meaning else "")
    return f"{words}; {advice.format(where=where)}" if advice else words


def exit_reason(exc: BaseException | None) -> str:
    """Why a recording stopped, as its trace records it (``info`` shows it): "interrupted
    (Ctrl-C)" for a ``KeyboardInterrupt``, else the exception's type and its first line."""
    if exc is None:
        return "failed"
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted (Ctrl-C)"
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def interrupted(exc: BaseException) -> bool:
    """An interrupt, or an error Python raised because of one: an interrupt that lands while a
    class is being created (a dataclass field's ``__set_name__``, during an import) comes out
    as ``RuntimeError`` caused by the ``KeyboardInterrupt``."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        if isinstance(e, KeyboardInterrupt):
            return True
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return False
