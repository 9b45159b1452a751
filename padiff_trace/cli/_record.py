"""``padiff-trace record`` (one model, this process) and ``run`` (two recorders + compare)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import resource
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from .._errors import TraceExistsError, UserError
from .._schema import SHARD_GLOB
from .._reader import open_trace
from ._archive import tag_pair

__all__ = ["register"]

logger = logging.getLogger(__name__)

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)?\s*$", re.I)
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def _size(text: str) -> int:
    m = _SIZE.match(text)
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 4096, 64MB, 1GiB)")
    unit = (m.group(2) or "").lower()[:1]
    return int(float(m.group(1)) * _UNITS[unit])


def _add_recording_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("what to record")
    g.add_argument("--steps", type=int, default=1, help="training steps to run (default 1; 0: export weights and inputs only)")
    g.add_argument("--include", action="append", default=[], metavar="GLOB", help="only modules matching (repeatable)")
    g.add_argument("--exclude", action="append", default=[], metavar="GLOB", help="skip modules matching (repeatable)")
    g.add_argument("--phase", action="append", default=[], choices=["forward", "backward", "other"])
    g.add_argument("--kind", action="append", default=[], metavar="KIND", help="only these record kinds (repeatable)")
    g.add_argument("--only-step", type=int, action="append", default=[], metavar="N", help="record only step N (repeatable)")
    g.add_argument("--every", type=int, default=1, metavar="K", help="record every K-th step")
    g.add_argument("--input-grads", action="store_true", help="also record gradients w.r.t. module inputs")
    g.add_argument("--weights", choices=["steps", "start", "none"], default="steps", help="when to record weights")
    g.add_argument("--stats-only", action="store_true", help="statistics and metadata only, no tensor data")
    g.add_argument("--max-tensor-bytes", type=_size, metavar="SIZE", help="larger tensors keep statistics only")
    g.add_argument("--full-stack", action="store_true", help="keep framework and library frames in stacks")
    g.add_argument("--ops", action="store_true", help="op-level records: framework calls inside forward")
    g.add_argument("--ops-include", action="append", default=[], metavar="GLOB", help="ops only inside these modules")
    g.add_argument("--ops-internal", action="store_true", help="also ops made by the framework's own layers")
    g.add_argument("--compression", choices=["gzip", "lzf"], help="lossless compression of tensor data")
    g.add_argument("--flush-seconds", type=float, default=2.0, help="flush (crash-safe point) at least this often")
    g.add_argument("--seed", type=int, help="seed python, numpy and the framework before model()")
    g.add_argument("--dtype", choices=["float64", "float32"], help="cast the model to this dtype")
    g.add_argument("--tag", type=tag_pair, action="append", default=[], metavar="KEY=VALUE", help="store a tag (repeatable)")
    g.add_argument("--force", action="store_true", help="replace an existing trace at the output path")


def register(sub: Any) -> None:
    p = sub.add_parser(
        "record",
        help="run a spec file's model and record it into a trace",
        description="Run SPEC.py (model(), inputs(), optional loss(output) and optimizer(model)) "
        "in this process and record every module input/output, gradient, weight and stack into "
        "the trace directory OUT. The framework is detected from the model.",
    )
    p.add_argument("spec", help="spec file, see README 'Spec files'")
    p.add_argument("--out", required=True, help="trace directory to write (e.g. traces/paddle.trace)")
    p.add_argument("--inputs-from", metavar="TRACE", help="feed the inputs recorded in another trace")
    p.add_argument("--weights-from", metavar="TRACE", help="initialise weights from another trace's step 0")
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
        "(and, in backward, output gradients), so its error is its own (runs a quick stats-only pass first "
        "to align the two models)",
    )
    p.add_argument("--single-step-plan", metavar="JSON", help=argparse.SUPPRESS)
    p.add_argument("--mapping", help="mapping file (JSON/YAML): pins weights for --weights-from (its 'weights' and "
                   "'modules' entries) and modules for --single-step-from; OUT/weightmap.json has this form")
    _add_recording_flags(p)
    p.set_defaults(handler=_record)

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
    p.add_argument("--atol", type=float)
    p.add_argument("--rtol", type=float)
    p.add_argument("--mode", help="verdict mode (see 'compare --help')")
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
    _add_recording_flags(p)
    p.set_defaults(handler=_run)


def _options(args: argparse.Namespace) -> Any:
    from padiff_trace.recorder import RecordOptions

    return RecordOptions(
        include=tuple(args.include),
        exclude=tuple(args.exclude),
        phases=tuple(args.phase),
        kinds=tuple(args.kind),
        steps=tuple(args.only_step),
        every=args.every,
        input_grads=args.input_grads,
        weights=args.weights,
        stats_only=args.stats_only,
        max_tensor_bytes=args.max_tensor_bytes,
        full_stack=args.full_stack,
        ops=args.ops,
        ops_include=tuple(args.ops_include),
        ops_internal=args.ops_internal,
        compression=args.compression,
        flush_seconds=args.flush_seconds,
        tags=dict(args.tag),
        seed=args.seed,
    )


def _record(args: argparse.Namespace) -> int:
    from padiff_trace.recorder._spec import run_spec

    options = _options(args)
    start = time.perf_counter()
    plan = args.single_step_plan
    if args.single_step_from and not plan:
        plan = _make_plan(args)
    try:
        out = run_spec(
            args.spec,
            args.out,
            options,
            steps=args.steps,
            inputs_from=args.inputs_from,
            weights_from=args.weights_from,
            dtype=args.dtype,
            overwrite=args.force,
            single_step_plan=plan,
            wait_source=args.wait_source,
            mapping=args.mapping if args.weights_from else None,
        )
    except UserError:
        raise
    except Exception as exc:  # the user's model raised: show their traceback, keep the trace
        traceback.print_exc()
        print(
            f"padiff-trace: error: the model raised {type(exc).__name__}: {exc}; "
            f"everything recorded before it is in {args.out} (marked incomplete)",
            file=sys.stderr,
        )
        return 1
    with open_trace(out) as tr:
        n, size = len(tr), tr.size_bytes()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"recorded {args.spec} -> {out}: {n} records, {size / 2**20:.1f} MiB, "
        f"{time.perf_counter() - start:.1f} s, peak RSS {peak:.0f} MiB"
    )
    return 0


def _make_plan(args: argparse.Namespace) -> str:
    """Record a stats-only structural pass of this spec, align it with the other trace, write the plan."""
    from padiff_trace.analyzer._single_step import single_step_plan

    out = Path(args.out)
    base = out.with_name(out.name + ".structure")
    argv = [sys.executable, "-m", "padiff_trace", "record", args.spec, "--out", str(base), "--force", "--stats-only"]
    argv += ["--weights", "none", "--steps", str(args.steps)]
    for flag in ("inputs_from", "weights_from", "seed", "dtype"):
        if getattr(args, flag) is not None:
            argv += [f"--{flag.replace('_', '-')}", str(getattr(args, flag))]
    rc = subprocess.run(argv, stdout=subprocess.DEVNULL).returncode
    if rc != 0:
        raise UserError(f"{args.spec}: the structural pass for single-step replay failed (exit {rc})")
    plan = single_step_plan(base, args.single_step_from, args.mapping)
    path = out.with_name(out.name + ".single-step.json")
    path.write_text(json.dumps(plan))
    return str(path)


def _child_argv(
    args: argparse.Namespace, spec: str, out: Path, replay_from: Path | None, cross_framework: bool = True
) -> list[str]:
    """The ``record`` command line of one child; ``cross_framework`` False: ``replay_from`` is a
    trace of the same spec (a referee of A), which pairs by identical paths, without the mapping."""
    argv = [sys.executable, "-m", "padiff_trace", "record", spec, "--out", str(out), "--steps", str(args.steps)]
    for flag in ("include", "exclude", "phase", "kind", "only_step", "ops_include"):
        for v in getattr(args, flag):
            argv += [f"--{flag.replace('_', '-')}", str(v)]
    for k, v in args.tag:
        argv += ["--tag", f"{k}={v}"]
    argv += ["--every", str(args.every), "--weights", args.weights, "--flush-seconds", str(args.flush_seconds)]
    for flag in ("input_grads", "stats_only", "full_stack", "ops", "ops_internal", "force"):
        if getattr(args, flag):
            argv.append(f"--{flag.replace('_', '-')}")
    for flag in ("max_tensor_bytes", "compression", "seed", "dtype"):
        if getattr(args, flag) is not None:
            argv += [f"--{flag.replace('_', '-')}", str(getattr(args, flag))]
    if replay_from is not None:
        argv += ["--inputs-from", str(replay_from), "--weights-from", str(replay_from)]
        if getattr(args, "mapping", None) and cross_framework:
            argv += ["--mapping", str(args.mapping)]
    return argv


def _replay_source(args: argparse.Namespace, trace_a: Path) -> Path | None:
    """Where B (and the referee and single-step recordings) take inputs and weights from:
    A's trace, or nowhere with ``--no-replay`` (every spec then builds its own)."""
    return None if args.no_replay else trace_a


def _trace_names(spec_a: str, spec_b: str, out: Path) -> tuple[Path, Path]:
    a, b = Path(spec_a).stem, Path(spec_b).stem
    if a == b:
        a, b = f"{a}-a", f"{b}-b"
    return out / f"{a}.trace", out / f"{b}.trace"


def _run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    trace_a, trace_b = _trace_names(args.spec_a, args.spec_b, out)
    env = dict(os.environ)  # the children get the user's environment, untouched
    if args.concurrent:
        rc = _record_concurrently(args, env, trace_a, trace_b, out)
        if rc is not None:
            return rc
    else:
        for spec, trace, replay in ((args.spec_a, trace_a, None), (args.spec_b, trace_b, _replay_source(args, trace_a))):
            argv = _child_argv(args, spec, trace, replay)
            logger.info("running %s", " ".join(argv))
            print(f"recording {spec} -> {trace}", flush=True)
            rc = subprocess.run(argv, env=env).returncode
            if rc != 0:
                print(f"padiff-trace: error: recording {spec} failed (exit {rc})", file=sys.stderr)
                return 2 if rc == 2 else 1
    if args.referee:
        refs = _record_referees(args, env, trace_a, trace_b)
        if isinstance(refs, int):
            return refs
        args.reference, args.reference_b = refs
    rc = _compare_after_run(args, trace_a, trace_b, out)
    if args.single_step:
        _single_step_after_run(args, env, trace_a, trace_b, out)
    return rc


def _record_concurrently(args: argparse.Namespace, env: dict[str, str], trace_a: Path, trace_b: Path, out: Path) -> int | None:
    """Run both recorders at once; B replays A's weights and inputs as soon as A has flushed them
    (a recorder writes its step-0 weights and inputs to a shard of their own first). An exit code on failure."""
    argv_a = _child_argv(args, args.spec_a, trace_a, None)
    argv_b = _child_argv(args, args.spec_b, trace_b, _replay_source(args, trace_a))
    if not args.no_replay:
        argv_b += ["--wait-source", "600"]
        stale = sorted(trace_a.glob(SHARD_GLOB)) + sorted(trace_a.glob(SHARD_GLOB + ".part"))
        if stale and not args.force:
            raise TraceExistsError(f"{trace_a}: a trace already exists here (pass --force to replace it)")
        for f in stale:  # B must not replay the shards of an earlier run (only our own files go)
            f.unlink()
    jobs = []
    for spec, argv, trace in ((args.spec_a, argv_a, trace_a), (args.spec_b, argv_b, trace_b)):
        print(f"recording {spec} -> {trace} (concurrently)", flush=True)
        jobs.append((spec, subprocess.Popen(argv, env=env)))
    worst = None
    for i, (spec, proc) in enumerate(jobs):
        rc = proc.wait()
        if rc != 0:
            print(f"padiff-trace: error: recording {spec} failed (exit {rc})", file=sys.stderr)
            worst = max(worst or 0, 2 if rc == 2 else 1)
            if i == 0 and jobs[1][1].poll() is None:  # B would wait for A's weights in vain
                jobs[1][1].terminate()
                jobs[1][1].wait()
                return worst
    return worst


def _record_referees(args: argparse.Namespace, env: dict[str, str], trace_a: Path, trace_b: Path) -> tuple[Path, Path] | int:
    """float64 recordings of both models, replaying A's inputs and weights (unless --no-replay)."""
    out: list[Path] = []
    for spec, trace in ((args.spec_a, trace_a), (args.spec_b, trace_b)):
        ref = trace.with_name(trace.stem + "-float64.trace")
        argv = _child_argv(args, spec, ref, _replay_source(args, trace_a), cross_framework=trace is trace_b)
        if "--dtype" in argv:
            argv[argv.index("--dtype") + 1] = "float64"
        else:
            argv += ["--dtype", "float64"]
        print(f"recording {spec} in float64 (referee) -> {ref}", flush=True)
        rc = subprocess.run(argv, env=env).returncode
        if rc != 0:
            print(f"padiff-trace: error: float64 recording of {spec} failed (exit {rc})", file=sys.stderr)
            return 2 if rc == 2 else 1
        out.append(ref)
    return out[0], out[1]


def _compare_options(args: argparse.Namespace) -> dict[str, Any]:
    keys = ("atol", "rtol", "mode", "mapping", "reference", "reference_b")
    return {k: getattr(args, k) for k in keys if getattr(args, k, None) is not None}


def _compare_after_run(args: argparse.Namespace, trace_a: Path, trace_b: Path, out: Path) -> int:
    from padiff_trace import analyzer
    from padiff_trace.analyzer._html import write_default_html

    report = analyzer.compare(trace_a, trace_b, **_compare_options(args))
    report_dir = out / "report"
    report.write(report_dir)
    write_default_html(report, report_dir)
    print(report.summary_text())
    print(f"report written to {report_dir}")
    return int(report.exit_code)


def _single_step_after_run(args: argparse.Namespace, env: dict[str, str], trace_a: Path, trace_b: Path, out: Path) -> None:
    from padiff_trace import analyzer
    from padiff_trace.analyzer._single_step import local_vs_accumulated, single_step_plan

    plan = single_step_plan(trace_b, trace_a, args.mapping)
    plan_path = out / "single-step-plan.json"
    plan_path.write_text(json.dumps(plan))
    trace_ss = trace_b.with_name(trace_b.stem + "-single-step.trace")
    argv = _child_argv(args, args.spec_b, trace_ss, _replay_source(args, trace_a)) + ["--single-step-plan", str(plan_path)]
    print(f"recording {args.spec_b} single-step against {trace_a} -> {trace_ss}", flush=True)
    rc = subprocess.run(argv, env=env).returncode
    if rc != 0:
        raise UserError(f"single-step recording of {args.spec_b} failed (exit {rc})")
    acc = analyzer.compare(trace_a, trace_b, **_compare_options(args))
    local = analyzer.compare(trace_a, trace_ss, **_compare_options(args))
    rows, text = local_vs_accumulated(acc, local)
    (out / "report").mkdir(parents=True, exist_ok=True)
    (out / "report" / "single_step.json").write_text(json.dumps({"schema_version": 1, "rows": rows}, indent=1))
    (out / "report" / "single_step.txt").write_text(text + "\n")
    print(text)
