"""Recorder child processes: job files, start, wait, and never an orphan.

A child is ``python -m padiff_trace record --job JOB.json --watch-parent PID``: the job
file is JSON (``RecordJob.to_dict``), never a pickled object or a hand-built argv. Each
child runs in a session (process group) of its own, so the parent can stop it and
anything it started at once; ``Children`` stops every child still running when the
pipeline call ends early (an error, Ctrl-C). A parent killed outright (SIGKILL) cannot
clean up, so each child watches its parent (``watch_parent``) and exits when it is gone.

A failing child ends with one line, ``padiff-trace: error: ...``. With ``hold_errors`` that
line is held back from stderr (the rest of the child's stderr passes through as it comes) and
handed to the caller (``Children.error``), whose own error carries it: the user reads the
child's reason once, not followed by a second line for the same failure.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import IO, final

from padiff_trace import TraceWriteError, UserError
from padiff_trace.recorder import RecordJob, RecordOptions

__all__ = ["JOB_FORMAT", "Children", "read_job", "watch_parent", "write_job"]

logger = logging.getLogger(__name__)

JOB_FORMAT = "padiff-trace-record-job"
_JOB_VERSION = 1
_STOP_GRACE = 3.0  # seconds between SIGTERM and SIGKILL when stopping a child's group
_ERROR_PREFIX = b"padiff-trace: error: "  # how the command line starts its one-line error
_SEGMENT = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)")  # a line, or a progress bar's redraw


def write_job(path: str | os.PathLike[str], job: RecordJob) -> Path:
    """Write ``job`` as a job file (JSON); returns its path."""
    p = Path(path)
    doc = {"format": JOB_FORMAT, "version": _JOB_VERSION, "job": job.to_dict()}
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    except OSError as exc:
        raise TraceWriteError.from_os(p, "write the job file", exc) from exc
    return p


def read_job(path: str | os.PathLike[str], options: type[RecordOptions] = RecordOptions) -> RecordJob:
    """The job of a job file written by ``write_job``; a ``UserError`` if it is not one."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError.from_os(p, "read the job file", exc, "another job file") from None
    except ValueError as exc:
        raise UserError(f"{p}: cannot read the job file: {exc}") from None
    if not isinstance(doc, Mapping) or doc.get("format") != JOB_FORMAT:
        raise UserError(f"{p}: not a padiff-trace job file (no 'format': {JOB_FORMAT!r})")
    if doc.get("version") != _JOB_VERSION:
        raise UserError(f"{p}: job file version {doc.get('version')!r}; this padiff-trace reads version {_JOB_VERSION}")
    try:
        return RecordJob.from_dict(doc.get("job"), options=options)  # type: ignore[arg-type]
    except UserError as exc:
        raise UserError(f"{p}: {exc}") from None


def watch_parent(pid: int, interval: float = 0.2) -> threading.Thread:
    """Exit this process (and its process group, when it leads one) as soon as process
    ``pid`` is no longer its parent: the pipeline that started it has died."""

    def loop() -> None:
        while os.getppid() == pid:
            time.sleep(interval)
        logger.error("the parent process %d is gone; stopping this recording", pid)
        logging.shutdown()  # flush the handlers: os._exit below skips interpreter shutdown
        if os.getpgrp() == os.getpid():  # a session of our own (how Children starts us): take our helpers along
            os.killpg(os.getpid(), signal.SIGKILL)
        os._exit(1)

    t = threading.Thread(target=loop, name="padiff-parent-watch", daemon=True)
    t.start()
    return t


@final
class _Relay:
    """Copies a child's stderr to ours as it comes, except a line that starts with the command
    line's error prefix while nothing but whitespace follows it: the child's closing one-line
    error, which ``take`` hands over and ``release`` prints after all."""

    def __init__(self, pipe: IO[bytes], out_fd: int = 2) -> None:
        self._pipe, self._out = pipe, out_fd  # fd 2: where the child's stderr went without us (it inherits ours)
        self._partial = b""  # an unfinished line that may still turn out to be the error line
        self._held = b""  # the error line (and whitespace after it), not written yet
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._copy, name="padiff-child-stderr", daemon=True)
        self._thread.start()

    def _copy(self) -> None:
        try:
            while chunk := os.read(self._pipe.fileno(), 1 << 16):
                with self._lock:
                    self._feed(chunk)
        except OSError as exc:
            logger.debug("reading a child's stderr failed: %s", exc)
        finally:
            with self._lock:
                self._segment(self._partial)
                self._partial = b""
            self._pipe.close()

    def _feed(self, data: bytes) -> None:
        data, end = self._partial + data, 0
        for m in _SEGMENT.finditer(data):
            self._segment(m.group())
            end = m.end()
        rest = data[end:]
        maybe_error = _ERROR_PREFIX.startswith(rest) or rest.startswith(_ERROR_PREFIX)
        if maybe_error or (self._held and not rest.strip()):
            self._partial = rest
        else:  # a progress bar or a line being written: pass it on now
            self._segment(rest)
            self._partial = b""

    def _segment(self, seg: bytes) -> None:
        if seg.rstrip(b"\r\n").startswith(_ERROR_PREFIX):
            self._write(self._held)
            self._held = seg
        elif self._held and not seg.strip():
            self._held += seg
        else:
            self._write(self._held + seg)
            self._held = b""

    def _write(self, data: bytes) -> None:
        while data:
            try:
                data = data[os.write(self._out, data):]
            except OSError:  # our own stderr is gone: keep draining the child's
                return

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def take(self) -> str | None:
        """The child's closing error line without its prefix; it will not be printed."""
        with self._lock:
            line, self._held = self._held.strip(), b""
        return line[len(_ERROR_PREFIX):].decode("utf-8", "replace") if line else None

    def release(self) -> None:
        """Print the held line after all (the child ended well, or nobody raises it)."""
        with self._lock:
            self._write(self._held)
            self._held = b""


@final
class Children:
    """The recorder child processes of one pipeline call. Use as a context manager: on exit
    every child still running is stopped with its whole process group. ``hold_errors``: a
    failed child's closing ``padiff-trace: error: ...`` line is not printed but kept for the
    caller's own error (``error``)."""

    def __init__(self, job_dir: str | os.PathLike[str], env: Mapping[str, str] | None = None, *, hold_errors: bool = False) -> None:
        self.job_dir = Path(job_dir)
        self._env = dict(env) if env is not None else None  # None: the user's environment, untouched
        self._hold = hold_errors
        self._running: list[subprocess.Popen[bytes]] = []
        self._relays: dict[subprocess.Popen[bytes], _Relay] = {}
        self._errors: dict[subprocess.Popen[bytes], str] = {}

    def __enter__(self) -> Children:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        for proc in list(self._running):
            self.stop(proc)

    def start(self, name: str, job: RecordJob, *, quiet: bool = False, nproc: int | None = None) -> subprocess.Popen[bytes]:
        """Write ``job`` to ``job_dir/name.json`` and start a recorder child on it (``nproc``: the
        child records it with that many processes, under the framework's launcher)."""
        path = write_job(self.job_dir / f"{name}.json", job)
        argv = [sys.executable, "-m", "padiff_trace", "record", "--job", str(path), "--watch-parent", str(os.getpid())]
        argv += ["--nproc", str(nproc)] if nproc is not None else []
        logger.info("starting %s", " ".join(argv))
        proc = subprocess.Popen(argv, env=self._env, start_new_session=True, stdout=subprocess.DEVNULL if quiet else None,
                                stderr=subprocess.PIPE if self._hold else None)
        self._running.append(proc)
        if proc.stderr is not None:
            self._relays[proc] = _Relay(proc.stderr)
        return proc

    def wait(self, proc: subprocess.Popen[bytes]) -> int:
        rc = proc.wait()
        self._settle(proc, failed=rc != 0)
        self._forget(proc)
        return rc

    def run(self, name: str, job: RecordJob, *, quiet: bool = False) -> int:
        """Start a child on ``job`` and wait for it; its exit status."""
        return self.wait(self.start(name, job, quiet=quiet))

    def error(self, proc: subprocess.Popen[bytes]) -> str | None:
        """With ``hold_errors``: the one-line error a failed child ended with (without the
        ``padiff-trace: error:`` prefix, not printed); None when it printed none (killed)."""
        return self._errors.get(proc)

    def stop(self, proc: subprocess.Popen[bytes]) -> None:
        """Stop ``proc`` and its process group: SIGTERM, then SIGKILL after a grace period."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(_STOP_GRACE)
        with contextlib.suppress(ProcessLookupError, PermissionError):  # the child if it hung on, or what it started
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        self._settle(proc, failed=False)
        self._forget(proc)

    def _settle(self, proc: subprocess.Popen[bytes], failed: bool) -> None:
        """Read the rest of an ended child's stderr; keep its error line when it failed."""
        relay = self._relays.pop(proc, None)
        if relay is None:
            return
        relay.join(_STOP_GRACE)  # the pipe ends with the child's group (a helper that escaped it: not waited for)
        line = relay.take() if failed else None
        if line is None:
            relay.release()
        else:
            self._errors[proc] = line

    def _forget(self, proc: subprocess.Popen[bytes]) -> None:
        if proc in self._running:
            self._running.remove(proc)

    def __repr__(self) -> str:
        return f"Children({self.job_dir}, running={[p.pid for p in self._running]})"
