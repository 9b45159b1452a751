"""``record --nproc N``: one spec recorded by N processes, started by the framework's own
launcher (``torchrun`` for a torch spec, ``python -m paddle.distributed.launch`` for paddle).

Nothing of our own coordinates the processes: the launcher starts ``python -m padiff_trace
record --job OUT/jobs/record.json`` N times, and each process finds its rank where the launcher
put it (``padiff_trace.recorder.detect_distributed``) and records ``OUT/rank-NNNNN``. This call
only builds the launcher's command line (``recorder.LAUNCHERS``), waits for it and reads back
what each rank left.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import logging
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from padiff_trace import RecordingFailedError, SpecError, TraceExistsError, UserError, is_trace
from padiff_trace.recorder import LAUNCHERS, Launcher, RecordJob, rank_dir

from ._children import write_job
from ._ranks import RankedTrace, is_multirank, open_ranks

__all__ = ["LaunchResult", "record_launched", "spec_framework"]

logger = logging.getLogger(__name__)

JOB_FILE = Path("jobs") / "record.json"  # OUT/jobs/record.json: what every rank records
LOG_DIR = "logs"  # OUT/logs/: per-process logs, for a launcher that keeps them (paddle's)
_ERROR_PREFIX = "padiff-trace: error: "
_INTERRUPT_GRACE = 10.0  # seconds the launcher gets to stop its processes after Ctrl-C


@dataclass(frozen=True)
class LaunchResult:
    """What ``record_launched`` recorded: the multi-rank trace, the launcher's command line."""

    trace: RankedTrace
    launcher: str
    command: tuple[str, ...]
    seconds: float


def spec_framework(spec: str | os.PathLike[str]) -> str:
    """'torch' or 'paddle': the framework a spec file imports (read, not run). A spec that
    imports both or neither is a ``UserError`` asking for the launcher by name."""
    path = Path(spec)
    try:
        tree = ast.parse(path.read_bytes(), str(path))
    except OSError as exc:
        raise SpecError.from_os(path, "read the spec file", exc, "another spec file") from None
    except SyntaxError as exc:
        raise SpecError(f"{path}:{exc.lineno}: SyntaxError: {exc.msg}") from None
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    found = sorted(names & set(LAUNCHERS))
    if len(found) != 1:
        which = " and ".join(found) if found else f"none of {', '.join(LAUNCHERS)}"
        raise UserError(f"{path}: imports {which}, so the launcher to start is not clear; pass --launcher "
                        f"{'|'.join(LAUNCHERS)}")
    return found[0]


def _check_free(out: Path, nproc: int, overwrite: bool) -> None:
    if is_trace(out):
        raise TraceExistsError(f"{out}: a single-process trace is there; a multi-rank recording writes one trace per rank "
                               "under its directory: choose another --out")
    if overwrite:
        return
    taken = [rank_dir(out, k) for k in range(nproc) if is_trace(rank_dir(out, k))]
    if taken:
        raise TraceExistsError(f"{taken[0]}: a trace already exists here (pass --force to replace the ranks' traces)")


class _Tee:
    """Copies the launcher's stderr to ours line by line and keeps the first one-line error a
    rank printed (``padiff-trace: error: ...``)."""

    def __init__(self, pipe: IO[bytes]) -> None:
        self.first_error: str | None = None
        self._pipe = pipe
        self._thread = threading.Thread(target=self._copy, name="padiff-launcher-stderr", daemon=True)
        self._thread.start()

    def _copy(self) -> None:
        out = getattr(sys.stderr, "buffer", None)  # a notebook's stderr takes text only
        with self._pipe:
            for raw in iter(self._pipe.readline, b""):
                line = raw.decode("utf-8", "replace")
                with contextlib.suppress(OSError, ValueError):  # our stderr gone: keep draining the launcher's
                    if out is not None:
                        out.write(raw)
                        out.flush()
                    else:
                        sys.stderr.write(line)
                line = line.strip()
                if self.first_error is None and line.startswith(_ERROR_PREFIX):
                    self.first_error = line[len(_ERROR_PREFIX):]

    def join(self) -> None:
        self._thread.join(5.0)


def _log_errors(log_dir: Path) -> str | None:
    """The first one-line error in a launcher's per-process logs (paddle keeps one per rank)."""
    for log in sorted(log_dir.glob("workerlog.*")):
        with contextlib.suppress(OSError):
            for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith(_ERROR_PREFIX):
                    return f"rank {log.suffix.lstrip('.')}: {line[len(_ERROR_PREFIX):]}"
    return None


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """The launcher stops its processes on SIGINT or SIGTERM (it started them in sessions of their
    own); SIGKILL only if it does not end, when the ranks' watch of their parent ends them."""
    for stop in (None, proc.terminate):
        if stop is not None:
            stop()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(_INTERRUPT_GRACE)
            return
    proc.kill()
    proc.wait()


def record_launched(job: RecordJob, nproc: int, *, framework: str | None = None, env: dict[str, str] | None = None) -> LaunchResult:
    """Record ``job`` with ``nproc`` processes started by the launcher of ``framework`` (default:
    the framework the spec imports): ``job.out/rank-NNNNN`` per rank, ``job.out/ranks.json``.
    ``env``: the launcher's environment (default: ours). Raises ``RecordingFailedError`` (exit
    2) when the launcher fails, naming the first error a rank printed and each rank's state."""
    if nproc < 1:
        raise UserError(f"--nproc {nproc}: at least one process")
    environ = os.environ if env is None else env
    inside = [row.rank for row in LAUNCHERS.values() if row.rank in environ]
    if inside:
        raise UserError(f"--nproc: this process already runs under a launcher ({inside[0]} is set); run "
                        "'padiff-trace record' there without --nproc")
    if not Path(job.spec).is_file():
        raise SpecError(f"{job.spec}: no such spec file")
    fw = framework or spec_framework(job.spec)
    launcher: Launcher | None = LAUNCHERS.get(fw)
    if launcher is None:
        raise UserError(f"--launcher {fw}: unknown; one of {', '.join(LAUNCHERS)}")
    out = Path(job.out)
    _check_free(out, nproc, job.overwrite)
    job_file = write_job(out / JOB_FILE, dataclasses.replace(job, progress=False))  # N bars on one terminal: none
    # each rank exits when the launcher is gone (killed outright, it cannot stop them)
    program = [sys.executable, "-m", "padiff_trace", "record", "--job", str(job_file), "--watch-parent", "0"]
    argv = launcher.command(nproc, program, out / LOG_DIR)
    logger.info("starting %s", " ".join(argv))
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    tee = _Tee(proc.stderr)
    try:
        rc = proc.wait()
    except KeyboardInterrupt:  # the launcher got the terminal's SIGINT too: let it stop its processes
        _stop(proc)
        raise
    finally:
        tee.join()
    ranked = open_ranks(out) if is_multirank(out) else None
    if rc != 0 or ranked is None or not ranked.complete:
        why = tee.first_error or _log_errors(out / LOG_DIR)
        states = "; ".join(ranked.problems()) if ranked is not None else "no rank recorded anything"
        raise RecordingFailedError(f"recording {job.spec} with {launcher.name} ({nproc} processes) failed (exit {rc})"
                                   + (f": {why}" if why else "") + (f"; {states}" if states else ""), 2)
    return LaunchResult(ranked, launcher.name, tuple(argv), time.perf_counter() - start)
