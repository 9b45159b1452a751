"""Failures of the environment (a full disk, a read-only or forbidden path) as one line that
names the path and the next step, never a traceback, and never blamed on the model."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from padiff_trace import TraceWriteError, UserError

__all__ = ["os_error_line", "writing"]


@contextlib.contextmanager
def writing(path: str | os.PathLike[str], what: str, flag: str) -> Iterator[None]:
    """Turn a failure to write ``what`` at ``path`` (given by ``flag``) into a ``TraceWriteError``
    that offers another ``flag``; other user errors (a trace that cannot be read) pass as they are,
    and so does a ``TraceWriteError`` raised ``from None`` (its own whole line: a directory in the
    way of a report file, where the previous report is kept)."""
    try:
        yield
    except TraceWriteError as exc:
        if exc.__cause__ is None and (exc.__context__ is None or exc.__suppress_context__):
            raise  # no operating-system error behind it to put into words
        raise TraceWriteError.from_os(path, f"write {what}", exc, f"another {flag}") from exc
    except UserError:
        raise
    except OSError as exc:
        raise TraceWriteError.from_os(path, f"write {what}", exc, f"another {flag}") from exc


def os_error_line(exc: OSError) -> str:
    """The one line for an ``OSError`` no handler turned into a ``UserError``."""
    path = exc.filename if exc.filename is not None else "padiff-trace"
    return str(UserError.from_os(path, "use this path", exc, "another path"))
