"""``run --nproc N``: record A with N processes, then B with N processes replaying A rank by rank
(rank k of B takes rank k of A's inputs, weights and random draws), then compare rank by rank.

Each recording is a child of ``run`` (``padiff-trace record --job J --nproc N``, see ``_children``)
that starts the spec's framework's launcher (``_launch``); the comparison is ``compare_ranks``.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from padiff_trace import TraceExistsError, TraceWriteError, command_line, is_trace
from padiff_trace.analyzer import CompareOptions
from padiff_trace.recorder import RecordJob, RecordOptions, rank_dir

from ._children import Children
from ._rankcompare import RankComparison, compare_ranks, option_items
from ._run import JOB_DIR, REPORT_DIR, _trace_names
from ._runsteps import RunTraces, failed

__all__ = ["RankRunResult", "run_ranks"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RankRunResult:
    """What ``run_ranks`` produced: the rank-by-rank comparison (its reports in ``report_dir``)."""

    comparison: RankComparison
    report_dir: Path
    traces: RunTraces

    @property
    def exit_code(self) -> int:
        """0 aligned, 1 a rank diverged, 3 a rank missing or incomplete."""
        return self.comparison.exit_code


def _check_free(traces: tuple[Path, Path], nproc: int, report_dir: Path) -> None:
    for t in traces:
        taken = [p for p in (t, *(rank_dir(t, k) for k in range(nproc))) if is_trace(p)]
        if taken:
            raise TraceExistsError(f"{taken[0]}: a trace already exists here (pass force=True to replace it)")
    if report_dir.is_dir() and any(report_dir.iterdir()):
        raise TraceExistsError(f"{report_dir}: a report already exists here (pass force=True to replace it)")


def run_ranks(
    spec_a: str | os.PathLike[str],
    spec_b: str | os.PathLike[str],
    out: str | os.PathLike[str],
    nproc: int,
    *,
    record: RecordOptions | None = None,
    steps: int = 1,
    dtype: str | None = None,
    replay: bool = True,
    mapping: str | os.PathLike[str] | None = None,
    compare: CompareOptions | None = None,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
    env: Mapping[str, str] | None = None,
) -> RankRunResult:
    """``run`` for models that need ``nproc`` processes: A recorded under its framework's
    launcher into ``out/A.trace/rank-NNNNN``, then B likewise, each rank of B replaying the same
    rank of A (``replay``), then rank k compared with rank k (``out/report/rank-NNNNN``). Options
    as ``run``'s. Raises ``TraceExistsError`` and ``RecordingFailedError`` as ``run`` does."""
    say = progress or logger.info
    spec_a, spec_b, out_dir = os.fspath(spec_a), os.fspath(spec_b), Path(out)
    trace_a, trace_b = _trace_names(spec_a, spec_b, out_dir)
    report_dir = out_dir / REPORT_DIR
    if not force:
        _check_free((trace_a, trace_b), nproc, report_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TraceWriteError.from_os(out_dir, "create the output directory", exc) from exc
    mapping_s = os.fspath(mapping) if mapping is not None else None
    base = RecordJob("", "", record or RecordOptions(), steps=steps, dtype=dtype, overwrite=force, run_id=uuid.uuid4().hex,
                     progress=False, command=command_line())
    source = str(trace_a) if replay else None
    jobs = [(spec_a, dataclasses.replace(base, spec=spec_a, out=str(trace_a))),
            (spec_b, dataclasses.replace(base, spec=spec_b, out=str(trace_b), inputs_from=source, weights_from=source,
                                         random_from=source, mapping=mapping_s if source else None))]
    with Children(out_dir / JOB_DIR, env, hold_errors=True) as kids:
        for spec, job in jobs:
            say(f"recording {spec} with {nproc} processes -> {job.out}")
            proc = kids.start(Path(job.out).stem, job, nproc=nproc)
            rc = kids.wait(proc)
            if rc != 0:
                raise failed(f"recording {spec}", rc, kids.error(proc))
    opts = option_items(compare or CompareOptions()) | {"mapping": mapping_s}
    comparison = compare_ranks(trace_a, trace_b, report_dir=report_dir, progress=say, **opts)
    return RankRunResult(comparison, report_dir, RunTraces(trace_a, trace_b))
