"""``run``: record A, record B replaying A's inputs and weights, compare (``padiff-trace run``)."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import sys
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from padiff_trace import (
    RecordingFailedError,
    SpecError,
    TraceExistsError,
    TraceWriteError,
    UserError,
    analyzer,
    command_line,
    is_trace,
)
from padiff_trace.analyzer import CompareOptions, Report
from padiff_trace.matching import CANNOT_MATCH, load_mapping
from padiff_trace.options import check_options
from padiff_trace.recorder import RecordJob, RecordOptions

from ._alternatives import settle_by_call_order, try_call_order, try_pairings
from ._children import Children
from ._closer import look_closer
from ._runsteps import Progress, RunTraces, failed, record_child, referee_failed, variant, writing

__all__ = ["RunResult", "RunTraces", "run"]

logger = logging.getLogger(__name__)

_PAIRING_ROUNDS = 3  # pairings the values choose, one after another (each kept one may show the next)

REPORT_DIR = "report"
JOB_DIR = "jobs"  # OUT/jobs/NAME.json: what each child recorded (rerun one with `record --job`)
PLAN_FILE = "single-step-plan.json"
_CONCURRENT_WAIT = 600.0  # seconds B waits for A's step-0 weights and inputs

@dataclass(frozen=True)
class RunResult:
    """What ``run`` produced: the report (also written to ``report_dir``) and the traces."""

    report: Report
    report_dir: Path
    traces: RunTraces
    single_step_text: str | None = None  # local vs accumulated error per module (``single_step=True``)

    @property
    def exit_code(self) -> int:
        """0 aligned, 1 diverged (the report's verdict)."""
        return int(self.report.exit_code)


def _trace_names(spec_a: str, spec_b: str, out: Path) -> tuple[Path, Path]:
    a, b = Path(spec_a).stem, Path(spec_b).stem
    if a == b:
        a, b = f"{a}-a", f"{b}-b"
    return out / f"{a}.trace", out / f"{b}.trace"


def _check_free(traces: RunTraces, report_dir: Path) -> None:
    """Without ``force``: refuse before recording anything if an output is already there."""
    for t in dataclasses.astuple(traces):
        if t is not None and is_trace(t):
            raise TraceExistsError(f"{t}: a trace already exists here (pass force=True to replace it)")
    if report_dir.is_dir() and any(report_dir.iterdir()):
        raise TraceExistsError(f"{report_dir}: a report already exists here (pass force=True to replace it)")


def _compare_options(given: CompareOptions | None, mapping: str | None, referee: bool) -> CompareOptions:
    """The comparison's options: ``given`` (default: the declared defaults) with run's mapping,
    unless it names one of its own; run's referees are its own (recorded with ``referee``)."""
    opts = CompareOptions() if given is None else given
    if not isinstance(opts, CompareOptions):
        raise TypeError(f"run(compare=...): expected an analyzer.CompareOptions, got {type(opts).__name__}")
    if referee and (opts.reference is not None or opts.reference_b is not None):
        raise UserError("referee=True records the float64 references itself: leave compare's reference and reference_b unset")
    return dataclasses.replace(opts, mapping=mapping) if opts.mapping is None and mapping is not None else opts


def _check_inputs(base: RecordJob, specs: tuple[str, str], mapping: str | None) -> None:
    """What would otherwise fail only in a child, after other recordings: the job's declared
    options (``--steps``, ``--dtype``), the spec files, the mapping file."""
    check_options(base)
    for spec in specs:
        if not Path(spec).is_file():
            raise SpecError(f"{spec}: no such spec file")
    if mapping is not None:
        load_mapping(mapping)  # MappingError: unreadable or invalid


def run(
    spec_a: str | os.PathLike[str],
    spec_b: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    record: RecordOptions | None = None,
    compare: CompareOptions | None = None,
    steps: int = 1,
    dtype: str | None = None,
    replay: bool = True,
    concurrent: bool = False,
    referee: bool = False,
    single_step: bool = False,
    mapping: str | os.PathLike[str] | None = None,
    force: bool = False,
    progress: Progress | None = None,
    env: Mapping[str, str] | None = None,
) -> RunResult:
    """Record ``spec_a``, then ``spec_b`` replaying A's inputs and weights (``replay``), each in
    a child process of its own, then compare; traces and the report go to ``out``.

    ``record``, ``steps``, ``dtype``: how every child records. ``compare``: how the traces are
    compared (``analyzer.CompareOptions``: mode, atol, rtol, ...). ``concurrent``: record A and B
    at the same time (B replays A's weights and inputs as soon as A has flushed them).
    ``referee``: also record both specs in float64 and classify every difference (the
    comparison's ``reference`` and ``reference_b``).
    ``single_step``: also record B single-step against A (local vs accumulated error).
    ``mapping``: mapping file for the weight transfer and the comparison (a ``compare.mapping``
    replaces it for the comparison). ``force``: replace existing traces and report. ``progress``
    receives one line per recording started (default: the log). ``env``: the children's
    environment (default: this process's, unchanged).

    Every option is checked before anything is recorded or created: a value its declaration
    does not allow, a spec file or a mapping file that is not there is a ``UserError``.
    Raises ``TraceExistsError`` (an output exists, no ``force``) and ``RecordingFailedError``
    (a child failed: "recording SPEC failed: " and the child's own one-line error, which is
    then not printed by the child, or "(exit N)" when it printed none; ``exit_code`` 2: nothing
    was compared)."""
    say = progress or logger.info
    spec_a, spec_b, out_dir = os.fspath(spec_a), os.fspath(spec_b), Path(out)
    mapping_s = os.fspath(mapping) if mapping is not None else None
    run_id = uuid.uuid4().hex  # in every trace's metadata; B waits for A's trace of this run
    # the recorders' progress bars reach our stderr through a pipe: shown when ours is a terminal
    base = RecordJob("", "", record or RecordOptions(), steps=steps, dtype=dtype, overwrite=force, run_id=run_id,
                     progress=sys.stderr.isatty(), command=command_line())
    compare_opts = _compare_options(compare, mapping_s, referee)
    _check_inputs(base, (spec_a, spec_b), mapping_s)  # before anything is created or recorded
    trace_a, trace_b = _trace_names(spec_a, spec_b, out_dir)
    traces = RunTraces(
        trace_a,
        trace_b,
        variant(trace_a, "float64") if referee else None,
        variant(trace_b, "float64") if referee else None,
        variant(trace_b, "single-step") if single_step else None,
    )
    report_dir = out_dir / REPORT_DIR
    if not force:
        _check_free(traces, report_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TraceWriteError.from_os(out_dir, "create the output directory", exc) from exc
    source = str(trace_a) if replay else None

    def job(spec: str, trace: Path, *, cross_framework: bool = True, **changes: Any) -> RecordJob:
        """One child's job; ``cross_framework`` False: a trace of A's own spec (its referee),
        which pairs with A by identical paths, without the mapping."""
        m = mapping_s if source and cross_framework else None
        fields: dict[str, Any] = {"inputs_from": source, "weights_from": source, "mapping": m, "random_from": source, **changes}
        return dataclasses.replace(base, spec=spec, out=str(trace), **fields)

    def job_b(trace: Path, m: str | None, **kw: Any) -> RecordJob:
        return dataclasses.replace(job(spec_b, trace, **kw), mapping=m)

    settled: str | None = None  # the mapping file B was recorded with when A's weights needed the call order
    with Children(out_dir / JOB_DIR, env, hold_errors=True) as kids:
        job_a = dataclasses.replace(base, spec=spec_a, out=str(trace_a))
        if concurrent:
            wait: dict[str, Any] = {"wait_source": _CONCURRENT_WAIT, "source_run_id": run_id} if source else {}
            _record_concurrently(kids, say, (spec_a, job_a), (spec_b, job(spec_b, trace_b, **wait)))
        else:
            for spec, j in ((spec_a, job_a), (spec_b, job(spec_b, trace_b))):
                say(f"recording {spec} -> {j.out}")
                try:
                    record_child(kids, f"recording {spec}", j)
                except RecordingFailedError as exc:
                    if spec is spec_a or not source or mapping_s is not None or CANNOT_MATCH not in str(exc):
                        raise  # only a transfer the registration order refused is tried in call order
                    settled = settle_by_call_order(kids, say, traces, job_b, exc)
                    compare_opts = dataclasses.replace(compare_opts, mapping=settled)
        if traces.reference_a is not None and traces.reference_b is not None:
            for spec, ref, cross in ((spec_a, traces.reference_a, False), (spec_b, traces.reference_b, True)):
                say(f"recording {spec} in float64 (referee) -> {ref}")
                # the exact reference: float64 without the runs' autocast (--autocast), never rounded to bf16
                exact = dataclasses.replace(base.options, autocast=None)
                j = job(spec, ref, cross_framework=cross, dtype="float64", options=exact)
                if cross and settled is not None:
                    j = dataclasses.replace(j, mapping=settled)
                try:
                    record_child(kids, f"float64 recording of {spec}", j)
                except RecordingFailedError as exc:
                    raise referee_failed(exc) from exc
            compare_opts = dataclasses.replace(compare_opts, reference=str(traces.reference_a), reference_b=str(traces.reference_b))
        report = analyzer.compare(trace_a, trace_b, compare_opts)
        pinned = settled  # a pairing the values confirmed: the mapping file B was recorded again with
        if settled is not None:
            report.add_convention(
                "weights paired in the order the models call their modules: the order they register them left "
                f"same-shape tensors apart ({Path(settled).name}: the mapping used)")
        if report.exit_code == 1 and source and mapping_s is None and not concurrent:
            if settled is None:
                report, traces, pinned = try_call_order(kids, say, report, traces, compare_opts, job_b)
            # on top of the call order's pairing where it settled one; a pairing kept may show the next one
            for _ in range(_PAIRING_ROUNDS):
                if report.exit_code != 1:
                    break
                report, traces, tried = try_pairings(kids, say, report, traces, compare_opts, job_b, pinned)
                if tried is None:
                    break
                pinned = tried
            report, traces = look_closer(kids, say, report, traces, compare_opts,
                                         lambda t, **kw: job(spec_a, t, cross_framework=False, **kw), job_b, pinned)
        with writing(report_dir, "write the report"):
            report.write(report_dir)  # every default format (the analyzer's choice: txt, json, csv, html)
        text = None
        if traces.single_step is not None:
            ss_job, ss_opts = job(spec_b, traces.single_step), compare_opts
            if pinned is not None:
                ss_job, ss_opts = dataclasses.replace(ss_job, mapping=pinned), dataclasses.replace(compare_opts, mapping=pinned)
            text = _single_step(kids, say, ss_job, traces, report, report_dir, ss_opts, pinned or mapping_s)
    return RunResult(report, report_dir, traces, text)


def _record_concurrently(kids: Children, say: Progress, a: tuple[str, RecordJob], b: tuple[str, RecordJob]) -> None:
    """Both recorders at once; if A fails, B (which may be waiting for A's weights) is stopped."""
    procs = []
    for spec, j in (a, b):
        say(f"recording {spec} -> {j.out} (concurrently)")
        procs.append((spec, kids.start(Path(j.out).stem, j)))
    for i, (spec, proc) in enumerate(procs):
        rc = kids.wait(proc)
        if rc != 0:
            if i == 0:  # B would wait for A's weights in vain
                logger.info("stopping the recording of %s: the recording of %s failed", procs[1][0], spec)
                kids.stop(procs[1][1])
            raise failed(f"recording {spec}", rc, kids.error(proc))  # the one line the user reads


def _single_step(
    kids: Children,
    say: Progress,
    job_ss: RecordJob,
    traces: RunTraces,
    report: Report,
    report_dir: Path,
    compare_opts: CompareOptions,
    mapping: str | None,
) -> str:
    """Record B single-step against A, compare, write ``report/single_step.{json,txt}``."""
    plan_path = Path(job_ss.out).parent / PLAN_FILE
    plan = json.dumps(analyzer.single_step_plan(traces.b, traces.a, mapping))
    with writing(plan_path, "write the single-step plan"):
        plan_path.write_text(plan)
    say(f"recording {job_ss.spec} single-step against {traces.a} -> {job_ss.out}")
    record_child(kids, f"single-step recording of {job_ss.spec}", dataclasses.replace(job_ss, single_step_plan=str(plan_path)))
    local = analyzer.compare(traces.a, job_ss.out, compare_opts)
    rows, text = analyzer.local_vs_accumulated(report, local)
    with writing(report_dir, "write the single-step report"):
        (report_dir / "single_step.json").write_text(json.dumps({"schema_version": 1, "rows": rows}, indent=1))
        (report_dir / "single_step.txt").write_text(text + "\n")
    return text
