"""Models that need more than one process, on the command line: ``record --nproc N`` (the
framework's launcher starts N recorders), and multi-rank traces in ``info``, ``ls`` and
``compare`` (rank by rank). The work is ``padiff_trace.pipeline``'s; this module parses and prints."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from padiff_trace import UserError, command_line, visible

from . import colour_wanted

if TYPE_CHECKING:
    from padiff_trace import CatalogEntry

__all__ = ["add_launch_flags", "compare_ranks_command", "info_ranks", "ls_ranks", "missing_ranks", "rank_line", "record_with_launcher",
           "run_with_launcher"]


def add_launch_flags(p: argparse.ArgumentParser) -> None:
    """``--nproc`` and ``--launcher`` of ``record``."""
    g = p.add_argument_group("models that need more than one process")
    g.add_argument("--nproc", type=int, metavar="N", help="record with N processes started by the framework's own launcher "
                   "(torchrun for a torch spec, python -m paddle.distributed.launch for paddle): one trace per rank, "
                   "OUT/rank-NNNNN (docs/distributed.md)")
    from padiff_trace.recorder import LAUNCHERS  # data: one row per framework (imports no framework)

    g.add_argument("--launcher", choices=sorted(LAUNCHERS), help="whose launcher --nproc starts (default: the framework "
                   "the spec imports)")


def record_with_launcher(args: argparse.Namespace, job: Any) -> int:
    """``record --nproc N``: the launcher records ``job`` with N processes; one summary line."""
    import dataclasses

    from padiff_trace import pipeline

    if args.single_step_from:
        raise UserError("--single-step-from with --nproc: not supported yet; record the ranks, then single-step one rank "
                        "by hand (record SPEC --out X --single-step-from T/rank-00000)")
    result = pipeline.record_launched(dataclasses.replace(job, command=job.command or command_line()), args.nproc,
                                      framework=args.launcher)
    t = result.trace
    records = sum(r.records for r in t.ranks)
    size = sum(r.size_bytes for r in t.ranks)
    print(visible(f"recorded {job.spec} with {result.launcher} ({t.world_size} processes) -> {t.path}: "
                  f"{t.world_size} ranks, {records} records, {size / 2**20:.1f} MiB, {result.seconds:.1f} s"))
    return 0


def run_with_launcher(args: argparse.Namespace, record: Any, compare: Any, job_values: dict[str, Any]) -> int:
    """``run A B --out DIR --nproc N``: both models with N processes each, compared rank by rank;
    ``record``, ``compare``, ``job_values``: the recording and compare options and
    ``--steps``/``--dtype`` as parsed (and checked)."""
    from padiff_trace import pipeline

    unsupported = [flag for flag, on in (("--referee", args.referee), ("--single-step", args.single_step),
                                          ("--concurrent", args.concurrent)) if on]
    if unsupported:
        raise UserError(f"run --nproc: {', '.join(unsupported)} not supported yet with several processes; drop it, or record "
                        "one rank at a time")
    result = pipeline.run_ranks(
        args.spec_a, args.spec_b, args.out, args.nproc, record=record, **job_values, replay=not args.no_replay, mapping=args.mapping,
        compare=compare, force=args.force, progress=lambda line: print(visible(line), flush=True),
    )
    print(result.comparison.summary_text())
    print(visible(f"reports written to {result.report_dir}/rank-NNNNN (summary: {result.report_dir}/summary.txt)"))
    return result.exit_code


def rank_line(distributed: dict[str, Any]) -> str:
    """``rank 1 of 2 (local 1), torchrun, backend gloo``: a rank trace's meta ``distributed``."""
    d = distributed
    local = f" (local {d['local_rank']})" if d.get("local_rank") is not None else ""
    backend = f", backend {d['backend']}" if d.get("backend") else ""
    return f"rank {d.get('rank')} of {d.get('world_size')}{local}, {d.get('launcher')}{backend}"


def _size(n: int) -> str:
    return f"{n / 2**20:.1f} MB" if n >= 2**20 else f"{n / 2**10:.1f} KB"


def info_ranks(path: str, as_json: bool) -> int:
    """``info T`` for a multi-rank trace: world size, launcher, and each rank's state."""
    from padiff_trace import pipeline

    t = pipeline.open_ranks(path)
    if as_json:
        doc = {"path": str(t.path), "multi_rank": True, "world_size": t.world_size, "framework": t.framework,
               "launcher": t.launcher, "backend": t.backend, "launch_id": t.launch_id, "complete": t.complete,
               "ranks": [{"rank": r.rank, "path": str(r.path), "state": r.state, "why": r.why or None, "records": r.records,
                          "steps": list(r.steps), "size_bytes": r.size_bytes} for r in t.ranks],
               "strays": [str(p) for p in t.strays]}
        print(json.dumps(doc, indent=2))
        return 0
    state = "complete" if t.complete else f"INCOMPLETE ({len(t.problems())} of {t.world_size} ranks not complete)"
    out = [
        f"trace      {t.path}  (multi-rank: one trace per rank)",
        f"state      {state}",
        f"ranks      world size {t.world_size}, {t.framework or '?'}, {t.launcher}" + (f", backend {t.backend}" if t.backend else ""),
    ]
    for r in t.ranks:
        detail = f"  {r.path.name}, {r.records} records, {_size(r.size_bytes)}" if r.readable else ""
        out.append(f"  {r.line()}{detail}")
    out += [f"  {p.name}: past world size {t.world_size} (left by an earlier recording)" for p in t.strays]
    out.append(f"(one rank in full: padiff-trace info {t.ranks[0].path})")
    print("\n".join(visible(line) for line in out))
    return 0


def missing_ranks(entries: list[CatalogEntry], extra_roots: tuple[Path, ...] = ()) -> list[tuple[Path, str]]:
    """For the multi-rank traces among catalog ``entries`` (and ``extra_roots``): a (path, what)
    for each rank without a trace to list: ``MISSING: rank 1 of 2 (...)``."""
    from padiff_trace import pipeline

    roots = {e.path.parent for e in entries if e.distributed} | set(extra_roots)
    listed = {e.path.resolve() for e in entries}
    out = []
    for root in sorted(roots):
        if not pipeline.is_multirank(root):
            continue
        for r in pipeline.open_ranks(root).ranks:
            if r.path.resolve() not in listed:
                out.append((r.path, f"{r.state.upper()}: {r.line()}"))
    return out


def ls_ranks(root: Path, tags: dict[str, str]) -> int:
    """``ls T`` for a multi-rank trace: its rank traces as a catalog, with the ranks missing."""
    from padiff_trace import catalog

    from ._archive import print_catalog

    entries = catalog(root, tags)
    print_catalog(entries, root, missing_ranks(entries, (root,)))
    return 0


def compare_ranks_command(args: argparse.Namespace, options: Any) -> int:
    """``compare A B`` for two multi-rank traces: rank k with rank k, a report per rank; for one
    multi-rank and one single-process trace: the ranks joined like the other, then compared."""
    from padiff_trace import pipeline

    if pipeline.is_multirank(args.a) != pipeline.is_multirank(args.b):
        return _compare_joined(args, options)
    if args.html:
        raise UserError("--html with multi-rank traces: use --report DIR (DIR/rank-NNNNN/report.html, one per rank)")
    result = pipeline.compare_ranks(args.a, args.b, report_dir=args.report, **pipeline.option_items(options))
    text = result.summary_text()
    text = text.splitlines()[0] if args.quiet else text
    if colour_wanted(sys.stdout):
        for word, code in (("DIVERGED", "\033[1;31m"), ("INCOMPLETE", "\033[1;33m"), ("MISSING", "\033[1;33m"), ("ALIGNED", "\033[1;32m")):
            text = text.replace(word, f"{code}{word}\033[0m")
    print(text)
    if args.report and not args.quiet:
        print(visible(f"reports written to {args.report}/rank-NNNNN (summary: {args.report}/summary.txt, ranks.json)"))
    return result.exit_code


def _compare_joined(args: argparse.Namespace, options: Any) -> int:
    """``compare`` of a sharded run with a single-process one: one line says what was joined
    (into ``REPORT/joined.trace`` with ``--report``, else a temporary trace), then the report."""
    from padiff_trace import analyzer, pipeline

    result = pipeline.compare_joined(args.a, args.b, report_dir=args.report, **pipeline.option_items(options))
    if args.html:
        from ._failures import writing

        with writing(args.html, "the HTML report", "--html"):
            analyzer.write_html(result.report, args.html)
    text = result.report.summary_text()
    text = text.splitlines()[0] if args.quiet else "\n".join([text, *result.rank_lines()])
    if colour_wanted(sys.stdout):
        for word, code in (("DIVERGED", "\033[1;31m"), ("INCOMPLETE", "\033[1;33m"), ("ALIGNED", "\033[1;32m")):
            text = text.replace(word, f"{code}{word}\033[0m")
    print(visible(result.note()))
    print(text)
    if args.report and not args.quiet:
        print(visible(f"report written to {args.report}"))
    return result.exit_code
