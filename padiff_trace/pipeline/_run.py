"""``run``: record A, record B replaying A's inputs and weights, compare (``padiff-trace run``)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import sys
import uuid
from collections.abc import Callable, Iterator, Mapping
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
from padiff_trace.matching import load_mapping, module_pattern
from padiff_trace.options import check_options
from padiff_trace.recorder import RecordJob, RecordOptions

from ._children import Children

__all__ = ["RunResult", "RunTraces", "run"]

logger = logging.getLogger(__name__)

REPORT_DIR = "report"
JOB_DIR = "jobs"  # OUT/jobs/NAME.json: what each child recorded (rerun one with `record --job`)
PLAN_FILE = "single-step-plan.json"
_CONCURRENT_WAIT = 600.0  # seconds B waits for A's step-0 weights and inputs

Progress = Callable[[str], None]


@dataclass(frozen=True)
class RunTraces:
    """Where ``run`` recorded: A, B, and the optional float64 referees and single-step run of B."""

    a: Path
    b: Path
    reference_a: Path | None = None
    reference_b: Path | None = None
    single_step: Path | None = None


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


def _variant(trace: Path, suffix: str) -> Path:
    return trace.with_name(f"{trace.stem}-{suffix}.trace")


def _check_free(traces: RunTraces, report_dir: Path) -> None:
    """Without ``force``: refuse before recording anything if an output is already there."""
    for t in dataclasses.astuple(traces):
        if t is not None and is_trace(t):
            raise TraceExistsError(f"{t}: a trace already exists here (pass force=True to replace it)")
    if report_dir.is_dir() and any(report_dir.iterdir()):
        raise TraceExistsError(f"{report_dir}: a report already exists here (pass force=True to replace it)")


def _failed(what: str, rc: int, error: str | None) -> RecordingFailedError:
    """``what`` failed, and why: ``error``, the one-line error the child ended with (held back
    from stderr, so the user reads it once), else (killed, crashed) the exit status."""
    why = f": {error}" if error else f" (exit {rc})"
    return RecordingFailedError(f"{what} failed{why}", 2)  # exit 1 means a divergence, only


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


def _record_child(kids: Children, what: str, j: RecordJob) -> None:
    """Record ``j`` in a child of its own and wait for it; ``RecordingFailedError`` if it failed."""
    proc = kids.start(Path(j.out).stem, j)
    rc = kids.wait(proc)
    if rc != 0:
        raise _failed(what, rc, kids.error(proc))


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
        _variant(trace_a, "float64") if referee else None,
        _variant(trace_b, "float64") if referee else None,
        _variant(trace_b, "single-step") if single_step else None,
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
        return dataclasses.replace(base, spec=spec, out=str(trace), inputs_from=source, weights_from=source, mapping=m,
                                   random_from=source, **changes)

    with Children(out_dir / JOB_DIR, env, hold_errors=True) as kids:
        job_a = dataclasses.replace(base, spec=spec_a, out=str(trace_a))
        if concurrent:
            wait: dict[str, Any] = {"wait_source": _CONCURRENT_WAIT, "source_run_id": run_id} if source else {}
            _record_concurrently(kids, say, (spec_a, job_a), (spec_b, job(spec_b, trace_b, **wait)))
        else:
            for spec, j in ((spec_a, job_a), (spec_b, job(spec_b, trace_b))):
                say(f"recording {spec} -> {j.out}")
                _record_child(kids, f"recording {spec}", j)
        if traces.reference_a is not None and traces.reference_b is not None:
            for spec, ref, cross in ((spec_a, traces.reference_a, False), (spec_b, traces.reference_b, True)):
                say(f"recording {spec} in float64 (referee) -> {ref}")
                # the exact reference: float64 without the runs' autocast (--autocast), never rounded to bf16
                exact = dataclasses.replace(base.options, autocast=None)
                _record_child(kids, f"float64 recording of {spec}", job(spec, ref, cross_framework=cross, dtype="float64", options=exact))
            compare_opts = dataclasses.replace(compare_opts, reference=str(traces.reference_a), reference_b=str(traces.reference_b))
        report = analyzer.compare(trace_a, trace_b, compare_opts)
        pinned = None  # a pairing the values confirmed: the mapping file B was recorded again with
        if report.exit_code == 1 and source and mapping_s is None and not concurrent:
            def job_b(trace: Path, m: str, **kw: Any) -> RecordJob:
                return dataclasses.replace(job(spec_b, trace, **kw), mapping=m)

            report, traces, pinned = _try_call_order(kids, say, report, traces, compare_opts, job_b)
            if report.exit_code == 1:
                report, traces, tried = _try_pairings(kids, say, report, traces, compare_opts, job_b, pinned)
                pinned = tried or pinned
        with _writing(report_dir, "write the report"):
            report.write(report_dir)  # every default format (the analyzer's choice: txt, json, csv, html)
        text = None
        if traces.single_step is not None:
            ss_job, ss_opts = job(spec_b, traces.single_step), compare_opts
            if pinned is not None:
                ss_job, ss_opts = dataclasses.replace(ss_job, mapping=pinned), dataclasses.replace(compare_opts, mapping=pinned)
            text = _single_step(kids, say, ss_job, traces, report, report_dir, ss_opts, pinned or mapping_s)
    return RunResult(report, report_dir, traces, text)


def _try_call_order(kids: Children, say: Progress, report: Report, traces: RunTraces, opts: CompareOptions,
                    job_b: Callable[..., RecordJob]) -> tuple[Report, RunTraces, str | None]:
    """A run that diverged where the order the models call their modules pairs same-shape weights
    otherwise than registration order did (``weight_map(call_order=True)``: norms each author
    registered in another order): record B again with that pairing, and keep that run unless it
    diverges earlier (a bug at one of those weights diverges at the same place both ways),
    saying so. Returns the report, the traces and the
    mapping file B was recorded with (None: the first run stands)."""
    ordered = analyzer.weight_map(traces.a, traces.b, call_order=True)
    current = report.weight_map
    if ordered is None or current is None or ordered.ambiguous:
        return report, traces, None
    moved = sorted(_whole_pairs(ordered) - _whole_pairs(current))
    if not moved:
        return report, traces, None
    path = traces.a.parent / "call-order.json"
    with _writing(path, "write the pairing to try"):
        path.write_text(json.dumps(ordered.to_json(), indent=1))
    alt_b = _variant(traces.b, "call-order")
    say(f"recording {Path(traces.b).stem} again pairing {len(moved)} weight(s) in the order the models call their modules "
        f"-> {alt_b}")
    other, alt_ref = _record_alternative(kids, traces, opts, job_b, alt_b, path)
    if analyzer.divergence_key(other) < analyzer.divergence_key(report):  # the order both compute in: kept unless worse
        logger.info("the pairing in %s diverges earlier: the first run stands", path)
        other.close()
        return report, traces, None
    shown = ", ".join(f"{a} ~ {b}" for a, b in moved[:3]) + (f" and {len(moved) - 3} more" if len(moved) > 3 else "")
    other.add_convention(
        f"weights paired in the order the models call their modules, not the order they register them: {shown} "
        f"({path.name}: the mapping used; B's first recording kept beside)")
    report.close()
    return other, dataclasses.replace(traces, b=alt_b, reference_b=alt_ref or traces.reference_b), str(path)


def _merged(base: dict[str, Any], alt: dict[str, Any]) -> dict[str, Any]:
    """Mapping document ``base`` (a pairing already kept) with ``alt`` on top: base's weights
    entries naming a tensor ``alt`` pairs, or one of a module ``alt`` pairs, give way."""
    named = {v for e in alt.get("weights", []) for k, v in e.items() if k in ("paddle", "torch", "source", "target")}
    patterns = [module_pattern(v) for e in alt.get("modules", []) for k, v in e.items() if k in ("paddle", "torch")]

    def kept(e: dict[str, Any]) -> bool:
        names = [v for k, v in e.items() if k in ("paddle", "torch", "source", "target")]
        return not any(n in named or any(rx.match(n.rpartition(".")[0]) for rx in patterns) for n in names)

    return {**base, "weights": [e for e in base.get("weights", []) if kept(e)] + alt.get("weights", []),
            "modules": base.get("modules", []) + alt.get("modules", [])}


def _whole_pairs(wm: Any) -> set[tuple[str, str]]:
    return {(p.a, p.b) for p in wm.pairs if p.transfer}


def _record_alternative(kids: Children, traces: RunTraces, opts: CompareOptions, job_b: Callable[..., RecordJob],
                        alt_b: Path, path: Path) -> tuple[Report, Path | None]:
    """B recorded again with the mapping file ``path`` (and its float64 referee when the run has
    one), compared with A: the report and the referee's trace."""
    _record_child(kids, f"recording {alt_b.stem}", job_b(alt_b, str(path)))
    alt_opts, alt_ref = dataclasses.replace(opts, mapping=str(path)), None
    if opts.reference_b is not None:
        alt_ref = _variant(alt_b, "float64")
        exact = dataclasses.replace(job_b(alt_ref, str(path)).options, autocast=None)
        _record_child(kids, f"float64 recording of {alt_b.stem}", job_b(alt_ref, str(path), dtype="float64", options=exact))
        alt_opts = dataclasses.replace(alt_opts, reference_b=str(alt_ref))
    return analyzer.compare(traces.a, alt_b, alt_opts), alt_ref


def _try_pairings(kids: Children, say: Progress, report: Report, traces: RunTraces, opts: CompareOptions,
                  job_b: Callable[..., RecordJob], base: str | None = None) -> tuple[Report, RunTraces, str | None]:
    """A divergence inside a module whose two same-shape weights were paired by name or order
    only, a call of which received agreeing inputs and returned a differing output while none
    agreed: record B again with them swapped in every block (``analyzer.pairing_alternatives``)
    and keep that run when a call of the module agrees there and it goes further before its
    first divergence, saying so in the report. Returns the report, the traces and the mapping
    file B was recorded with (None: the first run stands)."""
    base_doc = json.loads(Path(base).read_text()) if base is not None else None
    alternatives = [*analyzer.pairing_alternatives(report), *analyzer.rotary_alternatives(report),
                    *analyzer.patch_alternatives(report)]
    for i, alt in enumerate(alternatives, start=1):
        good, bad = analyzer.confirmed(report, alt.holder)
        if good or not bad:  # a call of it agrees, or none received agreeing inputs and differed
            logger.info("%s: %d call(s) agree and %d differ as the names paired its weights; not swapped",
                        alt.holder, good, bad)
            continue
        path = traces.a.parent / f"pairing-{i}.json"
        with _writing(path, "write the pairing to try"):
            path.write_text(json.dumps(_merged(base_doc, alt.mapping) if base_doc else alt.mapping, indent=1))
        alt_b = _variant(traces.b, f"pairing-{i}")
        say(f"recording {Path(traces.b).stem} again pairing {alt.swapped} in every block, to let the values say -> {alt_b}")
        other, alt_ref = _record_alternative(kids, traces, opts, job_b, alt_b, path)
        if not analyzer.confirmed(other, alt.holder)[0] or analyzer.divergence_key(other) <= analyzer.divergence_key(report):
            logger.info("the pairing in %s is confirmed by no call or diverges no later: the first run stands", path)
            other.close()
            continue
        d = report.first_divergence
        where = f" (at {d.located.a.call.module} / {d.located.b.call.module})" if d is not None and d.located else ""
        for c in report.conventions:  # what the run being replaced already said (a pairing by call order)
            if c.get("kind") == "convention" and c["text"].startswith("weights paired"):
                other.add_convention(c["text"])
        other.add_convention(
            f"weights paired by the recorded values, not by their names: {alt.swapped} in every block; the pairing the "
            f"names gave diverged{where}, this one goes further ({path.name}: the mapping used; B's first recording "
            "kept beside)")
        report.close()
        return other, dataclasses.replace(traces, b=alt_b, reference_b=alt_ref or traces.reference_b), str(path)
    return report, traces, None


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
            raise _failed(f"recording {spec}", rc, kids.error(proc))  # the one line the user reads


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
    with _writing(plan_path, "write the single-step plan"):
        plan_path.write_text(plan)
    say(f"recording {job_ss.spec} single-step against {traces.a} -> {job_ss.out}")
    _record_child(kids, f"single-step recording of {job_ss.spec}", dataclasses.replace(job_ss, single_step_plan=str(plan_path)))
    local = analyzer.compare(traces.a, job_ss.out, compare_opts)
    rows, text = analyzer.local_vs_accumulated(report, local)
    with _writing(report_dir, "write the single-step report"):
        (report_dir / "single_step.json").write_text(json.dumps({"schema_version": 1, "rows": rows}, indent=1))
        (report_dir / "single_step.txt").write_text(text + "\n")
    return text


@contextlib.contextmanager
def _writing(path: Path, doing: str) -> Iterator[None]:
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
