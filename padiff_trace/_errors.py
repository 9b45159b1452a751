"""The exception tree of padiff-trace.

    PadiffTraceError                      every error this project raises on purpose
    ├── UserError                         bad input: one line, no traceback, CLI exit 2
    │   ├── TraceNotFoundError            (also FileNotFoundError)
    │   ├── NotATraceError                a file that is not a padiff-trace trace
    │   ├── CorruptTraceError             truncated or damaged shard
    │   │   └── DamagedRecordError        one record's data or index row fails its checks
    │   ├── TraceChangedError             shard files replaced under an open reader
    │   ├── UnsupportedVersionError       written by a newer padiff-trace
    │   ├── TraceExistsError              (also FileExistsError) refusing to overwrite
    │   │   └── TraceLockedError          another live writer holds the directory
    │   ├── SpecError                     a spec file breaks the contract
    │   ├── FilterError                   (also ValueError) unknown kind/phase in a filter
    │   ├── MappingError                  a mapping file is invalid or matches nothing
    │   └── WeightTransferError           weights cannot be matched onto a model
    ├── TraceWriteError                   (also OSError) disk full, unwritable path
    ├── RecordingFailedError              a recorder child process of ``run`` failed (exit_code)
    └── InternalError                     a bug in padiff-trace: reported with traceback

Every message names the file or record concerned and, for mismatches, both sides.
"""

from __future__ import annotations

__all__ = [
    "CorruptTraceError",
    "DamagedRecordError",
    "FilterError",
    "InternalError",
    "MappingError",
    "NotATraceError",
    "PadiffTraceError",
    "RecordingFailedError",
    "SpecError",
    "TraceChangedError",
    "TraceExistsError",
    "TraceLockedError",
    "TraceNotFoundError",
    "TraceWriteError",
    "UnsupportedVersionError",
    "UserError",
    "WeightTransferError",
]


class PadiffTraceError(Exception):
    """Base of every error padiff-trace raises on purpose."""


class UserError(PadiffTraceError):
    """The user's input is wrong; shown as one line, CLI exits with 2."""


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


class TraceChangedError(UserError):
    """A shard file was replaced or modified while a reader had the trace open."""


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


class TraceWriteError(PadiffTraceError, OSError):
    """Writing the trace failed (disk full, permissions); flushed shards stay readable."""


class RecordingFailedError(PadiffTraceError):
    """A recorder child process failed; it has printed its own error. ``exit_code``: the CLI's
    exit status, 2 when the child's was 2 (bad input), else 1 (the model raised)."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class InternalError(PadiffTraceError):
    """A bug in padiff-trace itself."""
