"""Recorder child processes: job files, start, wait, and never an orphan.

A child is ``python -m padiff_trace record --job JOB.json --watch-parent PID``: the job
file is JSON (``RecordJob.to_dict``), never a pickled object or a hand-built argv. Each
child runs in a session (process group) of its own, so the parent can stop it and
anything it started at once; ``Children`` stops every child still running when the
pipeline call ends early (an error, Ctrl-C). A parent killed outright (SIGKILL) cannot
clean up, so each child watches its parent (``watch_parent``) and exits when it is gone.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import final

from padiff_trace import UserError
from padiff_trace.recorder import RecordJob, RecordOptions

__all__ = ["JOB_FORMAT", "Children", "read_job", "watch_parent", "write_job"]

logger = logging.getLogger(__name__)

JOB_FORMAT = "padiff-trace-record-job"
_JOB_VERSION = 1
_STOP_GRACE = 3.0  # seconds between SIGTERM and SIGKILL when stopping a child's group


def write_job(path: str | os.PathLike[str], job: RecordJob) -> Path:
    """Write ``job`` as a job file (JSON); returns its path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    doc = {"format": JOB_FORMAT, "version": _JOB_VERSION, "job": job.to_dict()}
    p.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return p


def read_job(path: str | os.PathLike[str], options: type[RecordOptions] = RecordOptions) -> RecordJob:
    """The job of a job file written by ``write_job``; a ``UserError`` if it is not one."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
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
class Children:
    """The recorder child processes of one pipeline call. Use as a context manager: on exit
    every child still running is stopped with its whole process group."""

    def __init__(self, job_dir: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> None:
        self.job_dir = Path(job_dir)
        self._env = dict(env) if env is not None else None  # None: the user's environment, untouched
        self._running: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> Children:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        for proc in list(self._running):
            self.stop(proc)

    def start(self, name: str, job: RecordJob, *, quiet: bool = False) -> subprocess.Popen[bytes]:
        """Write ``job`` to ``job_dir/name.json`` and start a recorder child on it."""
        path = write_job(self.job_dir / f"{name}.json", job)
        argv = [sys.executable, "-m", "padiff_trace", "record", "--job", str(path), "--watch-parent", str(os.getpid())]
        logger.info("starting %s", " ".join(argv))
        proc = subprocess.Popen(argv, env=self._env, start_new_session=True, stdout=subprocess.DEVNULL if quiet else None)
        self._running.append(proc)
        return proc

    def wait(self, proc: subprocess.Popen[bytes]) -> int:
        rc = proc.wait()
        self._forget(proc)
        return rc

    def run(self, name: str, job: RecordJob, *, quiet: bool = False) -> int:
        """Start a child on ``job`` and wait for it; its exit status."""
        return self.wait(self.start(name, job, quiet=quiet))

    def stop(self, proc: subprocess.Popen[bytes]) -> None:
        """Stop ``proc`` and its process group: SIGTERM, then SIGKILL after a grace period."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(_STOP_GRACE)
        with contextlib.suppress(ProcessLookupError, PermissionError):  # the child if it hung on, or what it started
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        self._forget(proc)

    def _forget(self, proc: subprocess.Popen[bytes]) -> None:
        if proc in self._running:
            self._running.remove(proc)

    def __repr__(self) -> str:
        return f"Children({self.job_dir}, running={[p.pid for p in self._running]})"
