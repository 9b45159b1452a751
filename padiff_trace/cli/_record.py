"""``padiff-trace record`` (one model, this process) and ``run`` (``pipeline.run``: two recorders + compare).

The recording flags are generated from the option declarations (``recorder.option_fields``
of ``RecordOptions`` and ``RecordJob``), ``run``'s compare flags from ``analyzer.CompareOptions``
(but ``RUN_SETS``), and parsed flags become options the same way (``add_option_flags``,
``option_values``; ``compare`` uses them too): a new option is one field, not an edit here.
``run`` builds both options before anything starts, so a bad value is one line, exit 2.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

from padiff_trace import PadiffTraceError, UserError, interrupted, open_trace, visible
from padiff_trace.recorder import OptionField, RecordJob, RecordOptions, option_fields

from ._distributed import add_launch_flags, record_with_launcher, run_with_launcher

if TYPE_CHECKING:
    from padiff_trace.analyzer import CompareOptions

__all__ = ["RUN_SETS", "add_option_flags", "option_values", "register"]

_RECORD_ARGS = ("spec", "out", "inputs_from", "weights_from", "random_from", "single_step_from", "mapping")  # what a --job file replaces


def _dest(o: OptionField) -> str:
    return o.flag.lstrip("-").replace("-", "_")


def _argtype(o: OptionField) -> Any:
    if isinstance(o.parse, type):
        return o.parse  # argparse's own "invalid int value" messages

    def parse(text: str) -> Any:
        try:
            return o.parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def _declared(cls: type, exclude: tuple[str, ...]) -> tuple[OptionField, ...]:
    return tuple(o for o in option_fields(cls) if o.name not in exclude)


def add_option_flags(group: Any, cls: type, *, exclude: tuple[str, ...] = ()) -> None:
    """One flag per option declared on the dataclass ``cls`` (``padiff_trace.options.option``),
    with its help, metavar and choices; ``exclude``: option names the command sets itself."""
    for o in _declared(cls, exclude):
        kw: dict[str, Any] = {"dest": _dest(o), "help": o.help.replace("%", "%%")}
        if o.shape == "switch":
            kw["action"] = argparse.BooleanOptionalAction if o.default else "store_true"
            kw["default"] = o.default
        else:
            kw.update(type=_argtype(o), metavar=o.metavar, choices=o.choices)
            if o.shape in ("list", "pairs"):
                kw.update(action="append", default=None)
            else:
                kw["default"] = o.default
        group.add_argument(o.flag, **kw)


def option_values(cls: type, args: argparse.Namespace, *, exclude: tuple[str, ...] = ()) -> dict[str, Any]:
    """The values of ``cls``'s options in parsed ``args`` (a flag not given: the declared default),
    those ``add_option_flags`` made with the same ``exclude``."""
    out = {}
    for o in _declared(cls, exclude):
        value = getattr(args, _dest(o))
        out[o.name] = o.default if value is None and o.shape in ("list", "pairs") else o.coerce(value)
    return out


# CompareOptions fields that run sets itself: --mapping (also the weight transfer's), the
# referees (--referee records them), quiet (run prints its own progress lines)
RUN_SETS = ("mapping", "reference", "reference_b", "quiet")


def _compare_options() -> type[CompareOptions]:
    from padiff_trace.analyzer import CompareOptions  # the analyzer, when the parser is built (~30 ms)

    return CompareOptions


def _changed_options(cls: type, args: argparse.Namespace) -> list[str]:
    return [o.flag for o in option_fields(cls) if getattr(args, _dest(o)) not in (None, o.default)]


def _add_recording_flags(p: argparse.ArgumentParser, options: type[RecordOptions]) -> None:
    g = p.add_argument_group("what to record")
    add_option_flags(g, RecordJob)  # --steps, --dtype
    add_option_flags(g, options)
    g.add_argument("--force", action="store_true", help="replace an existing trace (and, for run, report) at the output path")


def register(sub: Any, *, options: type[RecordOptions] = RecordOptions) -> None:
    """The ``record`` and ``run`` commands; ``options``: the class whose fields are the recording flags."""
    p = sub.add_parser(
        "record",
        help="run a spec file's model and record it into a trace",
        description="Run SPEC.py (model(), inputs(), optional loss(output) and optimizer(model)) "
        "in this process and record every module input/output, gradient, weight and stack into "
        "the trace directory OUT. The framework is detected from the model.",
    )
    p.add_argument("spec", nargs="?", help="spec file, see README 'Spec files'")
    p.add_argument("--out", help="trace directory to write (e.g. traces/paddle.trace); required unless --job")
    p.add_argument("--job", metavar="JOB.json", help="record what a job file describes (spec, out, options; "
                   "'run' writes one per recording to OUT/jobs/), instead of SPEC, --out and the flags")
    p.add_argument("--watch-parent", type=int, metavar="PID", help=argparse.SUPPRESS)  # run's children: exit with it
    p.add_argument("--inputs-from", metavar="TRACE", help="feed the inputs recorded in another trace")
    p.add_argument("--weights-from", metavar="TRACE", help="initialise weights from another trace's step 0")
    p.add_argument("--random-from", metavar="TRACE", help="replay the random draws inside forward (dropout masks, "
                   "rand values) recorded in another trace, at the matching calls ('run' does this with A's trace)")
    p.add_argument(
        "--wait-source",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="the --inputs-from/--weights-from trace is still being recorded by another process: wait up to "
        "SECONDS for its step-0 weights and inputs (used by 'run --concurrent')",
    )
    p.add_argument(
        "--single-step-from",
        metavar="TRACE",
        help="single-step replay: every module paired with a module of TRACE receives TRACE's recorded inputs "
        "(and, in backward, output gradients), so its error is its own (runs a quick stats-only pass first, "
        "in a temporary directory, to align the two models)",
    )
    p.add_argument("--mapping", help="mapping file (JSON/YAML): pins weights for --weights-from (its 'weights' and "
                   "'modules' entries) and modules for --single-step-from; OUT/weightmap.json has this form")
    _add_recording_flags(p, options)
    add_launch_flags(p)
    p.set_defaults(handler=_record, record_options=options)

    p = sub.add_parser(
        "run",
        help="record two specs in two processes, then compare",
        description="Record SPEC_A, then record SPEC_B in a second process replaying A's inputs and "
        "weights, then compare the two traces. Traces and the report go to OUT.",
    )
    p.add_argument("spec_a", help="reference spec (e.g. the Paddle model)")
    p.add_argument("spec_b", help="spec to check against it (e.g. the Torch model)")
    p.add_argument("--out", required=True, help="output directory for both traces and the report")
    p.add_argument(
        "--no-replay",
        action="store_true",
        help="do not copy A's inputs and weights into B, nor into the --referee and --single-step recordings",
    )
    p.add_argument(
        "--concurrent",
        action="store_true",
        help="record A and B at the same time (separate devices or cores): B imports its framework and "
        "builds its model meanwhile, and replays A's weights and inputs as soon as A has written them",
    )
    p.add_argument("--mapping", help="mapping file (JSON or YAML) for the weight transfer and the comparison; "
                   "B's trace holds the weight map used (weightmap.json), in this form")
    # the compare flags: one per CompareOptions field, but those run sets itself (RUN_SETS)
    add_option_flags(p.add_argument_group("how to compare (as 'compare')"), _compare_options(), exclude=RUN_SETS)
    p.add_argument(
        "--referee",
        action="store_true",
        help="also record both models in float64 (replaying A's inputs and weights, unless --no-replay) and "
        "classify every difference as rounding, A/B deviates or model difference",
    )
    p.add_argument(
        "--single-step",
        action="store_true",
        help="also record B single-step against A and report each module's local error next to its accumulated error",
    )
    _add_recording_flags(p, options)
    p.add_argument("--nproc", type=int, metavar="N", help="record each model with N processes, started by its framework's "
                   "launcher (torchrun, python -m paddle.distributed.launch); B's rank k replays A's rank k, and rank k is "
                   "compared with rank k (report/rank-NNNNN; docs/distributed.md)")
    p.set_defaults(handler=_run, record_options=options)


def _job(args: argparse.Namespace) -> RecordJob:
    """The recording ``args`` ask for: a job file's, or one built from SPEC, --out and the flags."""
    from padiff_trace import pipeline

    cls: type[RecordOptions] = args.record_options
    if args.job:
        given = [f"--{a.replace('_', '-')}" for a in _RECORD_ARGS if getattr(args, a) is not None]
        given += _changed_options(RecordJob, args) + _changed_options(cls, args)
        given += ["--wait-source"] * (args.wait_source != 0.0) + ["--force"] * args.force
        if given:
            raise UserError(f"--job {args.job}: the job file says what to record; drop {', '.join(given)}")
        return pipeline.read_job(args.job, options=cls)
    if not args.spec or not args.out:
        raise UserError("record: a spec file and --out are required (or --job FILE)")
    return RecordJob(
        args.spec,
        args.out,
        cls.from_dict(option_values(cls, args)),
        **option_values(RecordJob, args),
        inputs_from=args.inputs_from,
        weights_from=args.weights_from,
        random_from=args.random_from,
        mapping=args.mapping,
        wait_source=args.wait_source,
        overwrite=args.force,
    )


def _record(args: argparse.Namespace) -> int:
    from padiff_trace import pipeline

    if args.watch_parent is not None:  # 0: the process that started this one (a launcher, for its ranks)
        pipeline.watch_parent(args.watch_parent or os.getppid())
    if args.launcher and args.nproc is None:
        raise UserError(f"--launcher {args.launcher}: only with --nproc N (how many processes the launcher starts)")
    job = _job(args)
    if args.nproc is not None:  # the framework's launcher records it, one process per rank
        return record_with_launcher(args, job)
    before = _files(Path(job.out))
    start = time.perf_counter()
    try:
        out = pipeline.record(job, single_step_from=args.single_step_from)
    except PadiffTraceError:  # ours (a full disk, bad input): one line, never blamed on the model
        raise
    except Exception as exc:  # the user's code raised
        if interrupted(exc):  # Ctrl-C while the spec imported a framework: an interrupt, not the model's error
            raise KeyboardInterrupt from exc
        spec = Path(job.spec)
        who, line = _raiser(exc, spec)
        # the spec did not load or could not build its model: a first-run mistake, said in one
        # line at its place in the spec; a crash while recording keeps its traceback, to debug
        if who not in _SETUP or args.verbose:
            traceback.print_exc()
        after = _files(Path(job.out))  # an earlier trace left there is not this recording's
        kept = (
            f"; everything recorded before it is in {visible(str(job.out))} (marked incomplete)"
            if after is not None and after != before else "; nothing was recorded"
        )
        at = "" if line is None else f"{visible(str(spec))}:{line}: "
        print(f"padiff-trace: error: {at}{who} raised {type(exc).__name__}: {visible(str(exc))}{kept}", file=sys.stderr)
        return 2  # exit 1 means a divergence, only
    with open_trace(out) as tr:
        n, size = len(tr), tr.size_bytes()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(visible(
        f"recorded {job.spec} -> {out}: {n} records, {size / 2**20:.1f} MiB, "
        f"{time.perf_counter() - start:.1f} s, peak RSS {peak:.0f} MiB"
    ))
    return 0


# the spec's functions (README "Spec files"); an error raised in another one is the model's
_SPEC_FUNCTIONS = ("model", "inputs", "loss", "optimizer", "clip_grad")
_SPEC_TOP = "the spec file"  # its top level raised while it was imported
_SETUP = (_SPEC_TOP, "the spec's model()")  # raisers before anything is recorded: one line, no traceback


def _raiser(exc: BaseException, spec: Path) -> tuple[str, int | None]:
    """Who raised ``exc`` - the spec function whose frame is outermost in the spec file (its
    ``inputs()``, ``loss()``...), the spec file's top level, else the model - and the spec
    file's line nearest the raise (None: no frame of the spec file)."""
    try:
        where = spec.resolve()
    except OSError:
        return "the model", None
    who, line = "the model", None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        code = frame.f_code
        if Path(code.co_filename).resolve() != where:
            continue
        line = lineno
        if who == "the model" and code.co_name in _SPEC_FUNCTIONS:
            who = f"the spec's {code.co_name}()"
        elif who == "the model" and code.co_name == "<module>":
            who = _SPEC_TOP
    return who, line


def _files(path: Path) -> dict[str, tuple[int, int]] | None:
    """The files in directory ``path`` by inode and modification time (None: no directory): a
    failed recording compares them with the files there before it, to tell whether it wrote any."""
    try:
        return {e.name: (e.inode(), e.stat().st_mtime_ns) for e in os.scandir(path)}
    except OSError:
        return None


def _say(line: str) -> None:
    print(visible(line), flush=True)


def _run(args: argparse.Namespace) -> int:
    from padiff_trace import pipeline, release_freed_memory

    release_freed_memory()  # this process compares; the recorders are child processes with their own allocator

    cls: type[RecordOptions] = args.record_options
    # every option checked before anything is recorded: a bad value is one line, exit 2
    record = cls.from_dict(option_values(cls, args))
    compare_cls = _compare_options()
    compare = compare_cls(**option_values(compare_cls, args, exclude=RUN_SETS))
    if args.nproc is not None:  # models that need more than one process
        return run_with_launcher(args, record, compare, option_values(RecordJob, args))
    result = pipeline.run(
        args.spec_a,
        args.spec_b,
        args.out,
        record=record,
        compare=compare,
        **option_values(RecordJob, args),
        replay=not args.no_replay,
        concurrent=args.concurrent,
        referee=args.referee,
        single_step=args.single_step,
        mapping=args.mapping,
        force=args.force,
        progress=_say,
    )
    print(result.report.summary_text())
    print(visible(f"report written to {result.report_dir}"))
    if result.single_step_text is not None:
        print(result.single_step_text)
    return result.exit_code
