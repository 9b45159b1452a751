"""``padiff-trace history``: archived versions of one model against a baseline trace."""

from __future__ import annotations

import argparse
import errno
import os
import sys
import unicodedata
from collections.abc import Container, Sequence
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


def _width(text: str) -> int:
    """Terminal columns ``text`` takes: East Asian wide characters two, combining marks none."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def column_widths(rows: Sequence[Sequence[str]]) -> list[int]:
    """Each column as wide as its widest cell (cells already ``visible``: escapes are wider)."""
    return [max((_width(r[i]) for r in rows if i < len(r)), default=0) for i in range(max(map(len, rows)))]


def table_row(cells: Sequence[str], widths: Sequence[int], right: Container[int] = ()) -> str:
    """One line of a table: each cell padded to its column's width, ``right`` the columns aligned
    right; the last cell (free text) is not padded."""
    out = []
    for i, cell in enumerate(cells):
        pad = " " * (widths[i] - _width(cell)) if i < len(cells) - 1 else ""
        out.append(pad + cell if i in right else cell + pad)
    return " ".join(out)


def print_catalog(entries: list[CatalogEntry], root: Path, missing: Sequence[tuple[Path, str]] = ()) -> None:
    """One line per trace; a rank of a multi-process run says so in its state, and ``missing``
    (path, what) adds a line for each rank that left no trace."""
    rows = [["trace", "model", "version", "framework", "device", "created", "steps", "size", "state"]]
    for e in entries:
        rel = str(e.path.relative_to(root)) if e.path != root else "."
        fw = f"{e.framework} {e.framework_version}".strip()
        state = "complete" if e.complete else "incomplete"
        if e.error:  # a trace this user may not read is not damaged
            state = ("UNREADABLE: " if _DENIED in e.error else "DAMAGED: ") + e.error
        elif e.damaged:
            state = f"{state}, {e.health}"
        if e.distributed:  # one rank of a multi-process recording
            state = f"{state}, rank {e.distributed.get('rank')} of {e.distributed.get('world_size')}"
        cells = [rel, e.model, e.version, fw, e.device, e.created[:19], str(e.steps), f"{e.size_bytes / 2**20:.1f}MB", state]
        rows.append([visible(c) for c in cells])  # names from a trace or a path may hold control characters
    for path, what in missing:
        rows.append([visible(str(path.relative_to(root)) if path != root else "."), *[""] * 7, visible(what)])
    widths = column_widths(rows)  # whole names: a cut path could not be told from its neighbours
    for r in rows:
        print(table_row(r, widths, right={6, 7}))
    if not entries and not missing:
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
    head = ["version", "created", "framework", "verdict", "out max|a-b|", "out rel-L2", "first divergence"]
    # rows print as each comparison ends, so the widths come from what is known up front: the
    # names, the longest verdict; the numbers (%.3e, %.2e) are never wider than their headers
    known = [[visible(e.version or e.path.name), visible(e.created[:19]), visible(e.framework)] for e in entries]
    widths = column_widths([head, *known, ["", "", "", "incomplete"]])
    right = {4, 5}
    print(table_row(head, widths, right))
    worst = 0
    # the bar only on a terminal: in a log file its redraws would be lines of noise
    for e, cells in zip(tqdm(entries, desc="history", unit="trace", leave=False,
                             disable=len(entries) < 3 or not sys.stderr.isatty()), known, strict=True):
        if e.path.resolve() == baseline.resolve():
            print(table_row([*cells[:3], "baseline"], widths, right))
            continue
        with analyzer.compare(e.path, baseline, mapping=args.mapping, quiet=True) as report:  # one trace pair open at a time
            mx, rl = _output_error(report)
        d = report.first_divergence
        where = "-" if d is None else visible(f"{d.pair.a.name} [{d.pair.a.module_type}]")
        worst = max(worst, report.exit_code)
        fmx = "-" if mx is None else f"{mx:.3e}"
        frl = "-" if rl is None else f"{rl:.2e}"
        print(table_row([*cells[:3], report.verdict.lower(), fmx, frl, where], widths, right))
    return worst
