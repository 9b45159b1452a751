"""Report formats as a registry, and how a report directory is written.

``FORMATS`` maps a format's name to its file and its writer (``(ReportData, TextIO) -> None``):
``txt`` report.txt, ``json`` report.json, ``csv`` pairs.csv, ``html`` report.html. Adding a
format is one row. The registry and its writers read a report as ``_contents.ReportData`` and
never import ``Report``, which writes itself through them. Writers stream pair by pair, so writing a report of a million pairs holds
one pair at a time. ``write_report`` streams every requested format into a fresh sibling
directory and swaps it with the old report directory only when all are written
(``_atomic.write_report_dir``; in place with a rollback where a directory cannot be swapped):
a failed write (a writer's error, a full disk, a refused rename) leaves the previous report
exactly as it was, every file, and no temporary files behind.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from padiff_trace import UserError, csv_cell

from ..judging._metric_table import shown
from ..judging._pairtable import PAIR_SECTIONS, pair_section
from ._atomic import write_report_dir
from ._html import write_page
from ._text import write_blocks

if TYPE_CHECKING:
    from ._contents import ReportData

__all__ = ["FORMATS", "ReportFormat", "render_csv", "render_json", "write_csv", "write_json", "write_report"]


@dataclass(frozen=True)
class ReportFormat:
    name: str
    filename: str
    write: Callable[[ReportData, TextIO], None]
    description: str
    default: bool = True  # written by ``Report.write`` unless formats are named

    def render(self, report: ReportData) -> str:
        """The whole file as one string (small reports, tests)."""
        buf = io.StringIO()
        self.write(report, buf)
        return buf.getvalue()


def write_json(report: ReportData, out: TextIO) -> None:
    """report.json: ``Report.to_dict`` (schema in docs/analyzer.md), its alignment and per-pair
    lists streamed one entry per line; non-finite numbers as strings."""
    head = json.dumps(_clean(report.to_dict(pairs=False)), indent=1)
    out.write(head[: head.rindex("}")].rstrip())
    t = report.pairs
    lists: list[tuple[str, Iterable[Any]]] = [("alignment", report.alignment_rows())]
    for key in PAIR_SECTIONS:
        roles = [r for r in t.roles if pair_section(r) == key]
        lists.append((key, (p.as_dict() for p in t.subset(t.role_mask(*roles))) if len(t) else ()))
    for key, items in lists:
        out.write(f',\n "{key}": [')
        sep = "\n  "
        for item in items:
            out.write(sep + json.dumps(_clean(item), separators=(",", ":")))
            sep = ",\n  "
        out.write("\n ]" if sep != "\n  " else "]")
    out.write("\n}\n")


def render_json(report: ReportData) -> str:
    return FORMATS["json"].render(report)


_CSV_HEAD = ["index", "step", "role", "passed", "class", "a", "a_type", "b", "b_type", "shape"]


def write_csv(report: ReportData, out: TextIO) -> None:
    """pairs.csv: one row per pair, a column per metric the table marks ``csv``. Trace strings
    have control characters made visible, and a cell never starts a formula."""
    defs = shown("csv")
    w = csv.writer(out)
    w.writerow([*_CSV_HEAD, *(d.name for d in defs), "reason"])
    for p in report.pairs:
        m, a, b = p.metrics, p.a, p.b
        vals = [m.values.get(d.name, "") for d in defs] if m is not None and not m.uncomparable else [""] * len(defs)
        row = [p.index, p.step, p.role, int(p.passed), p.cls or "", a.name, a.module_type, b.name, b.module_type,
               "x".join(map(str, b.shape)), *vals, p.reason]
        w.writerow([csv_cell(v) for v in row])


def render_csv(report: ReportData) -> str:
    return FORMATS["csv"].render(report)


FORMATS: dict[str, ReportFormat] = {
    f.name: f
    for f in (
        ReportFormat("txt", "report.txt", write_blocks, "the terminal summary, then one block per pair"),
        ReportFormat("json", "report.json", write_json, "everything, versioned schema (docs/analyzer.md)"),
        ReportFormat("csv", "pairs.csv", write_csv, "one row per pair, for spreadsheets and pandas"),
        ReportFormat("html", "report.html", write_page,
                     "one self-contained page: plots, summaries and the interesting pairs; opens offline"),
    )
}


def write_report(report: ReportData, directory: str | os.PathLike[str], formats: Iterable[str] | None = None) -> Path:
    """Write ``formats`` (default: every format marked ``default``) of ``report`` into ``directory``,
    all files replaced together; other files there stay."""
    names = [n for n, f in FORMATS.items() if f.default] if formats is None else list(formats)
    unknown = [n for n in names if n not in FORMATS]
    if unknown:
        raise UserError(f"unknown report format(s) {', '.join(unknown)}; known: {', '.join(FORMATS)}")
    return write_report_dir(Path(directory), {FORMATS[n].filename: partial(FORMATS[n].write, report) for n in names})


def _clean(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x
