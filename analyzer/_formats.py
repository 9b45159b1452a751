"""Report formats as a registry, and how a report directory is written.

``FORMATS`` maps a format's name to its file and its renderer (``Report -> str``):
``txt`` report.txt, ``json`` report.json, ``csv`` pairs.csv, ``html`` report.html. Adding a
format is one row. ``write_report`` renders every requested format in memory first, then
writes them with ``_atomic.write_atomic``: a failed write (a renderer's error, a full disk)
leaves the previous report whole and no temporary files behind.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from padiff_trace import UserError, csv_cell

from ._atomic import write_atomic
from ._html import render_html
from ._metric_table import shown
from ._text import blocks_text

if TYPE_CHECKING:
    from ._report import Report

__all__ = ["FORMATS", "ReportFormat", "render_csv", "render_json", "write_report"]


@dataclass(frozen=True)
class ReportFormat:
    name: str
    filename: str
    render: Callable[[Report], str]
    description: str
    default: bool = True  # written by ``Report.write`` unless formats are named


def render_json(report: Report) -> str:
    """report.json: ``Report.to_dict`` (schema in docs/analyzer.md); non-finite numbers as strings."""
    return json.dumps(_clean(report.to_dict()), indent=1)


_CSV_HEAD = ["index", "step", "role", "passed", "class", "a", "a_type", "b", "b_type", "shape"]


def render_csv(report: Report) -> str:
    """pairs.csv: one row per pair, a column per metric the table marks ``csv``. Trace strings
    have control characters made visible, and a cell never starts a formula."""
    defs = shown("csv")
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow([*_CSV_HEAD, *(d.name for d in defs), "reason"])
    for p in report.pairs:
        m = p.metrics
        vals = [m.values.get(d.name, "") for d in defs] if m is not None and not m.uncomparable else [""] * len(defs)
        row = [p.index, p.step, p.role, int(p.passed), p.cls or "", p.a.name, p.a.module_type, p.b.name, p.b.module_type,
               "x".join(map(str, p.b.shape)), *vals, p.reason]
        w.writerow([csv_cell(v) for v in row])
    return buf.getvalue()


FORMATS: dict[str, ReportFormat] = {
    f.name: f
    for f in (
        ReportFormat("txt", "report.txt", blocks_text, "the terminal summary, then one block per pair"),
        ReportFormat("json", "report.json", render_json, "everything, versioned schema (docs/analyzer.md)"),
        ReportFormat("csv", "pairs.csv", render_csv, "one row per pair, for spreadsheets and pandas"),
        ReportFormat("html", "report.html", render_html, "one self-contained page: plots, tables, stacks; opens offline"),
    )
}


def write_report(report: Report, directory: str | os.PathLike[str], formats: Iterable[str] | None = None) -> Path:
    """Write ``formats`` (default: every format marked ``default``) of ``report`` into ``directory``."""
    names = [n for n, f in FORMATS.items() if f.default] if formats is None else list(formats)
    unknown = [n for n in names if n not in FORMATS]
    if unknown:
        raise UserError(f"unknown report format(s) {', '.join(unknown)}; known: {', '.join(FORMATS)}")
    files = {FORMATS[n].filename: FORMATS[n].render(report) for n in names}  # render all before touching a file
    return write_atomic(Path(directory), files)


def _clean(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x
