"""``padiff-trace history``: archived versions of one model against a baseline trace."""

from __future__ import annotations

import argparse
import errno
import os
from pathlib import Path
from typing import Any

from tqdm import tqdm

from padiff_trace import CatalogEntry, UserError, catalog, visible

__all__ = ["register", "print_catalog", "tag_pair"]

_DENIED = os.strerror(errno.EACCES)  # "Permission denied", as the core's read errors quote it


def tag_pair(text: str) -> tuple[str, str]:
    """argparse type of ``--tag KEY=VALUE`` (record, run, ls, history)."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"tag {text!r}: expected KEY=VALUE")
    return key, value


def print_catalog(entries: list[CatalogEntry], root: Path) -> None:
    head = f"{'trace':<34} {'model':<14} {'version':<10} {'framework':<18} {'device':<7} {'created':<19} {'steps':>5} {'size':>9}  state"
    print(head)
    for e in entries:
        rel = str(e.path.relative_to(root)) if e.path != root else "."
        fw = f"{e.framework} {e.framework_version}".strip()
        state = "complete" if e.complete else "incomplete"
        if e.error:  # a trace this user may not read is not damaged
            state = ("UNREADABLE: " if _DENIED in e.error else "DAMAGED: ") + e.error
        elif e.damaged:
            state = f"{state}, {e.health}"
        print(visible(
            f"{rel[:34]:<34} {e.model[:14]:<14} {e.version[:10]:<10} {fw[:18]:<18} {e.device[:7]:<7} "
            f"{e.created[:19]:<19} {e.steps:>5} {e.size_bytes / 2**20:>7.1f}MB  {state}"
        ))
    if not entries:
        print("(no traces)")


def register(sub: Any) -> None:
    p = sub.add_parser(
        "history",
        help="compare archived versions of a model with a baseline trace",
        description="Find the traces under DIR (filtered by --tag), order them by creation time and "
        "compare each with a baseline (default: the oldest): a regression view showing the model "
        "output's error and the first divergence per version.",
    )
    p.add_argument("dir", help="directory holding archived traces")
    p.add_argument("--tag", type=tag_pair, action="append", default=[], metavar="KEY=VALUE", help="only traces with this tag")
    p.add_argument("--baseline", metavar="TRACE", help="reference trace (default: the oldest selected trace)")
    p.add_argument("--mapping", metavar="FILE", help="module mapping file for the comparisons")
    p.set_defaults(handler=_history)


def _output_error(report: Any) -> tuple[float | None, float | None]:
    outs = [p for p in report.pairs if p.role == "output" and p.a.module == "" and p.metrics is not None]
    if not outs:
        return None, None
    return max(p.metrics.max_abs for p in outs), max(p.metrics.rel_l2 for p in outs)


def _history(args: argparse.Namespace) -> int:
    from padiff_trace import analyzer

    root = Path(args.dir)
    entries = [e for e in catalog(root, dict(args.tag)) if not e.error]  # damaged traces: compare reports them
    if not entries:
        raise UserError(f"{root}: no readable traces match {' '.join(f'{k}={v}' for k, v in args.tag) or 'the filter'}")
    baseline = Path(args.baseline) if args.baseline else entries[0].path
    print(visible(f"baseline: {baseline}"))
    print(f"{'version':<12} {'created':<19} {'framework':<10} {'verdict':<9} {'out max|a-b|':>12} {'out rel-L2':>10}  first divergence")
    worst = 0
    for e in tqdm(entries, desc="history", unit="trace", leave=False, disable=len(entries) < 3):
        if e.path.resolve() == baseline.resolve():
            print(visible(f"{e.version or e.path.name:<12} {e.created[:19]:<19} {e.framework:<10} {'baseline':<9}"))
            continue
        report = analyzer.compare(e.path, baseline, mapping=args.mapping, quiet=True)
        mx, rl = _output_error(report)
        d = report.first_divergence
        where = "-" if d is None else f"{d.pair.a.name} [{d.pair.a.module_type}]"
        verdict = report.verdict.lower()
        worst = max(worst, report.exit_code)
        fmx = "-" if mx is None else f"{mx:.3e}"
        frl = "-" if rl is None else f"{rl:.2e}"
        print(visible(f"{e.version or e.path.name:<12} {e.created[:19]:<19} {e.framework:<10} {verdict:<9} {fmx:>12} {frl:>10}  {where}"))
    return worst
