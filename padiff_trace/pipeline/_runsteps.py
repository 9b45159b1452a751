"""What ``run`` and the pairings it tries share: where each recording goes, and how one child is
recorded and waited for."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from padiff_trace import RecordingFailedError, TraceWriteError, UserError
from padiff_trace.recorder import RecordJob

from ._children import Children

__all__ = ["Progress", "RunTraces", "failed", "record_child", "referee_failed", "variant", "writing"]

# how the frameworks name the float32 a model's own code kept in a float64 run (paddle: "float32";
# torch: "expected scalar type Double but found Float", "but got: float != double")
_FIXED_FLOAT32 = re.compile(r"float32|\bFloat\b|\bfloat != double|\bdouble != float")

Progress = Callable[[str], None]


@dataclass(frozen=True)
class RunTraces:
    """Where ``run`` recorded: A, B, and the optional float64 referees and single-step run of B."""

    a: Path
    b: Path
    reference_a: Path | None = None
    reference_b: Path | None = None
    single_step: Path | None = None


def variant(trace: Path, suffix: str) -> Path:
    return trace.with_name(f"{trace.stem}-{suffix}.trace")


def failed(what: str, rc: int, error: str | None) -> RecordingFailedError:
    """``what`` failed, and why: ``error``, the one-line error the child ended with (held back
    from stderr, so the user reads it once), else (killed, crashed) the exit status."""
    why = f": {error}" if error else f" (exit {rc})"
    return RecordingFailedError(f"{what} failed{why}", 2)  # exit 1 means a divergence, only


def referee_failed(exc: RecordingFailedError) -> RecordingFailedError:
    """A float64 (referee) recording's failure, with the next step where the model's own code
    fixes a dtype: a float32 named in the error (a ``dtype="float32"`` argument, a cast, a
    float32 buffer) is one the float64 run cannot change, so no float64 twin can be recorded."""
    text = str(exc)
    if not _FIXED_FLOAT32.search(text):
        return exc
    return RecordingFailedError(
        f"{text}; the model fixes float32 in its own code (the line named), so it cannot run in float64: "
        "run without --referee, or let that dtype follow the input's", exc.exit_code)


def record_child(kids: Children, what: str, j: RecordJob) -> None:
    """Record ``j`` in a child of its own and wait for it; ``RecordingFailedError`` if it failed."""
    proc = kids.start(Path(j.out).stem, j)
    rc = kids.wait(proc)
    if rc != 0:
        raise failed(what, rc, kids.error(proc))


@contextlib.contextmanager
def writing(path: Path, doing: str) -> Iterator[None]:
    """A failure to write (a full disk, a read-only directory) as one ``TraceWriteError`` naming
    ``path`` and the next step; reading errors (a damaged trace) pass unchanged."""
    try:
        yield
    except TraceWriteError as exc:
        raise TraceWriteError.from_os(path, doing, exc) from exc
    except UserError:
        raise
    except OSError as exc:
        raise TraceWriteError.from_os(path, doing, exc) from exc
