"""``record``: one spec file recorded in this process, optionally single-step against a trace."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import tempfile
from pathlib import Path

from padiff_trace import TraceWriteError, UserError, analyzer
from padiff_trace.recorder import RecordJob, RecordOptions

from ._children import Children

__all__ = ["record"]

logger = logging.getLogger(__name__)


def record(job: RecordJob, *, single_step_from: str | os.PathLike[str] | None = None) -> Path:
    """Run ``job`` in this process; returns the trace directory.

    ``single_step_from``: every module call paired with a call of that trace receives its
    recorded inputs (and output gradients). The pairing comes from a quick stats-only
    structural pass of the same spec, recorded by a child process into a temporary
    directory that is removed afterwards: nothing is written beside ``job.out``."""
    if single_step_from is None:
        return job.run()
    try:
        tmpdir = tempfile.TemporaryDirectory(prefix="padiff-single-step-")
    except OSError as exc:
        raise TraceWriteError.from_os(tempfile.gettempdir(), "create a temporary directory", exc, "another TMPDIR") from exc
    with tmpdir as tmp:
        plan = _single_step_plan(job, os.fspath(single_step_from), Path(tmp))
        return dataclasses.replace(job, single_step_plan=str(plan)).run()


def _single_step_plan(job: RecordJob, other: str, tmp: Path) -> Path:
    """Record the structure of ``job``'s model (a child, stats only), align it with ``other``, write the plan."""
    structure = tmp / "structure.trace"
    probe = RecordJob(
        job.spec,
        str(structure),
        RecordOptions(stats_only=True, weights="none", seed=job.options.seed),
        steps=job.steps,
        dtype=job.dtype,
        inputs_from=job.inputs_from,
        weights_from=job.weights_from,
        random_from=job.random_from,
        mapping=job.mapping,
    )
    logger.info("%s: structural pass for single-step replay -> %s", job.spec, structure)
    with Children(tmp / "jobs") as kids:
        rc = kids.run("structure", probe, quiet=True)
    if rc != 0:
        raise UserError(f"{job.spec}: the structural pass for single-step replay failed (exit {rc})")
    path = tmp / "single-step-plan.json"
    plan = json.dumps(analyzer.single_step_plan(structure, other, job.mapping))
    try:
        path.write_text(plan)
    except OSError as exc:
        raise TraceWriteError.from_os(path, "write the single-step plan", exc, "another TMPDIR") from exc
    return path
