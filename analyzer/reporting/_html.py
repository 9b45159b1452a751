"""One self-contained HTML file for a comparison: plots, diagnosis, first divergence, tables.

The page needs nothing but itself: the plots are inline SVG drawn here from the numbers
(``_svg``), the table script and style are inlined from ``assets/``, nothing is fetched, so
it opens offline. Every string taken from a trace is either HTML-escaped on the Python side
or inserted by the page's script with ``textContent``; the embedded JSON escapes ``<``, ``>``
and ``&`` so no trace content can close the script block. Table columns come from the
metric table (``_metric_table.METRICS``, those marked ``html``).
"""

from __future__ import annotations

import html
import io
import json
import math
import os
import shlex
from functools import partial
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from padiff_trace import visible

from ..judging._metric_table import shown
from ..judging._pairtable import PAIR_SECTIONS, pair_section
from ._atomic import write_atomic_streams
from ._steps import first_off
from ._svg import SERIES, FirstMark, error_plot, series_plot

if TYPE_CHECKING:
    from ..judging._pairview import PairResult
    from ._contents import Finding, ReportData

__all__ = ["TABLE_ROWS", "divergence_html", "render_html", "table_rows", "write_html", "write_page"]



def _E(text: str) -> str:
    """Text for the page: control and bidi characters shown as escapes, then HTML-escaped."""
    return html.escape(visible(str(text)))


TABLE_ROWS = 5000  # pairs a table of the page lists at most (the page's script shows 5000 at once)
# fixed columns of the pair tables: (key, label, numeric)
_COLUMNS = [("index", "#", True), ("step", "step", True), ("role", "kind", False), ("verdict", "verdict", False),
            ("cls", "class", False), ("a", "A", False), ("a_type", "A type", False), ("b", "B", False),
            ("shape", "shape", False)]


def _num(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _columns() -> list[dict[str, Any]]:
    cols = [{"key": k, "label": label, "num": num, "title": ""} for k, label, num in _COLUMNS]
    cols += [{"key": d.name, "label": d.title, "num": True, "title": d.description} for d in shown("html")]
    return [*cols, {"key": "reason", "label": "reason", "num": False, "title": ""}]


def _row(p: PairResult) -> dict[str, Any]:
    m = p.metrics
    row: dict[str, Any] = {
        "index": p.index,
        "step": p.step,
        "role": p.role,
        "verdict": "ok" if p.passed else "FAIL",
        "cls": getattr(p, "cls", None) or "",
        "a": p.a.name,
        "a_type": p.a.module_type,
        "b": p.b.name,
        "shape": "x".join(map(str, p.b.shape)),
        "reason": p.reason,
    }
    for d in shown("html"):
        row[d.name] = _num(m.values.get(d.name)) if m is not None and not m.uncomparable else None
    return row


def _plots(report: ReportData) -> str:
    amps = {x.call_pair.a.id for x in report.amplifiers[:5]}
    t = report.pairs
    plots = []  # (title, rows drawn: pair indices in execution order)
    for role, title in (
        ("output", "Forward: error of each module output, in execution order"),
        ("grad_output", "Backward: error of each output gradient, in execution order"),
    ):
        rows = np.flatnonzero(t.role_mask(role) & t.measured) if len(t) else np.zeros(0, np.intp)
        if len(rows):
            plots.append((title, rows))
    on, first = _first_mark(report, [rows for _, rows in plots])
    figs = [error_plot(t.subset(rows), title, first if k == on else None, amps,
                       {key: t.metric(key)[rows] for key, _, _ in SERIES})
            for k, (title, rows) in enumerate(plots)]
    figs += _step_plots(report)
    return "".join(f'<div class="figure">{f}</div>' for f in figs) or "<p>No module outputs or gradients compared.</p>"


def _first_mark(report: ReportData, plots: list[np.ndarray]) -> tuple[int, FirstMark | None]:
    """Which plot marks the first divergence, and where: at its own point where a plot draws it,
    else at the point nearest to it in execution order on any plot (a tie: the later point, where
    its effect shows), labelled with what it is. ``plots``: each plot's pair indices, in order."""
    d = report.first_divergence
    if d is None:
        return -1, None
    p = d.pair
    near = []  # (distance, drawn before it, plot, pair index)
    for k, rows in enumerate(plots):
        at = int(np.searchsorted(rows, p.index))
        near += [(abs(j - p.index), j < p.index, k, j) for j in rows[max(at - 1, 0) : at + 1].tolist()]
    if not near:
        return -1, None
    dist, before, k, j = min(near)
    if dist == 0:
        return k, FirstMark(j)
    where = "after" if before else "before"
    tip = (f"first divergence: {p.role} {p.a.name} [{p.a.module_type}], step {p.step}, pair #{p.index}"
           f"{': ' + p.reason if p.reason else ''}. Not drawn on this plot: marked at pair #{j}, the nearest "
           f"point drawn; the first divergence comes {where} it in execution order.")
    return k, FirstMark(j, f"first divergence: {p.role}, {where} this point", tip)


def _step_plots(report: ReportData) -> list[str]:
    """A multi-step comparison: loss A and B, and each series' worst error, against step."""
    rows = report.steps
    if len(rows) < 2:
        return []
    xs = [r["step"] for r in rows]
    off = [v for v in first_off(rows).values() if v is not None]
    mark = min(off) if off else None
    loss = series_plot("Per step: loss of A and B", xs, [("loss A", "#1f77b4", [r["loss_a"] for r in rows]),
                                                        ("loss B", "#ff7f0e", [r["loss_b"] for r in rows])], False, mark)
    err = series_plot("Per step: worst relative L2 error", xs, [
        ("weights", "#9467bd", [r["weight_rel_l2"] for r in rows]),
        ("param grads", "#2ca02c", [r["param_grad_rel_l2"] for r in rows]),
        ("loss", "#1f77b4", [r["loss_rel_l2"] for r in rows]),
        ("outputs", "#8c564b", [r["output_rel_l2"] for r in rows]),
    ], True, mark)
    return [loss, err]


def _findings_html(findings: list[Finding]) -> str:
    items = "".join(f'<li class="{"hint" if f.hint else "fact"}">{"→ " if f.hint else ""}{_E(f.text)}</li>' for f in findings)
    return f'<ul class="diagnosis">{items}</ul>' if items else ""


def _environment_html(report: ReportData) -> str:
    """The box near the top: numerics settings that differ between the two recordings."""
    diffs = report.environment
    if not diffs:
        return ""
    rows = "".join(
        f"<tr><td>{_E(x.label)}</td><td>{_E(x.shown('a'))}</td><td>{_E(x.shown('b'))}</td>"
        f"<td style=\"white-space:normal\">{_E(x.effect.effect)}"
        + (' <span class="muted">(a GPU setting: no effect here, both ran on CPU)</span>' if x.inert else "")
        + f"</td><td style=\"white-space:normal\">{_E(x.effect.switch or '')}</td></tr>"
        for x in diffs
    )
    return ('<div class="environment" style="border:1px solid #b26a00;background:#fff8e1;padding:0.4em 0.8em;'
            'margin:0.8em 0"><b>Environment differences that can change numbers</b>'
            "<table><tr><th>setting</th><th>A</th><th>B</th><th>known effect</th><th>to remove it</th></tr>"
            f"{rows}</table></div>")


def _stack_html(frames: Any) -> str:
    lines = [f"{f.file}:{f.line} in {f.function}\n    {f.source}" for f in frames] or ["(no user frames)"]
    return f'<div class="stack">{_E(chr(10).join(lines))}</div>'


def divergence_html(report: ReportData) -> str:
    d = report.first_divergence
    if d is None:
        return "<p>No pair exceeds its tolerance.</p>"
    p = d.pair
    m = p.metrics
    metrics = "" if m is None or m.uncomparable else ", ".join(
        f"{x.title} {x.text(m.values.get(x.name))}" + (f" at {list(m.argmax)}" if x.name == "max_abs" and m.argmax else "")
        for x in shown("summary")
    )
    return (
        f"<p>step {p.step}, {_E(p.role)}: {_E(p.reason)}<br>{_E(metrics)}</p>"
        + _findings_html([f for f in report.diagnosis if f.topic == "first_divergence"])
        + "<div class='panel'>"
        + f"<div><b>A</b> {_E(p.a.name)} [{_E(p.a.module_type)}]{_stack_html(p.a.stack)}</div>"
        + f"<div><b>B</b> {_E(p.b.name)} [{_E(p.b.module_type)}]{_stack_html(p.b.stack)}</div></div>"
    )


_INTERNAL_ARGS = ("--job", "--watch-parent")  # what ``run`` passes each recording child (``record --job``)


def _command_html(meta: dict[str, Any]) -> str:
    """The command line of a trace: the user's, when the trace records it (``user_command``);
    for a recording child of ``run`` (``record ... --watch-parent PID``, a hidden flag only ``run``
    passes) the command recorded less ``run``'s internal arguments, with a note; else as recorded."""
    if meta.get("user_command"):
        return _E(meta["user_command"])
    cmd = str(meta.get("command", ""))
    try:
        argv = shlex.split(cmd)
    except ValueError:  # unbalanced quotes: shown as recorded
        return _E(cmd)
    if argv[1:2] != ["record"] or not any(a.split("=", 1)[0] == "--watch-parent" for a in argv):
        return _E(cmd)  # what the user ran (a ``record --job`` typed by hand included)
    kept = [a for k, a in enumerate(argv)
            if a.split("=", 1)[0] not in _INTERNAL_ARGS and (k == 0 or argv[k - 1] not in _INTERNAL_ARGS)]
    return (f'{_E(shlex.join(kept))} <span class="muted">(the recording process that padiff-trace run started; '
            "the command line you typed is not recorded in the trace)</span>")


def _meta_cell(meta: dict[str, Any], key: str) -> str:
    """One metadata value of a trace for the page; tags as ``key=value`` pairs, one box each (a
    value may hold spaces or commas)."""
    if key == "command":
        return _command_html(meta)
    value = meta.get(key, "")
    if key == "tags" and isinstance(value, dict):
        return "".join(f'<span class="tag">{_E(f"{k}={v}")}</span>' for k, v in value.items())
    return _E(str(value))


def _meta_html(report: ReportData) -> str:
    ma, mb = report.a.trace.meta, report.b.trace.meta
    keys = ["framework", "framework_version", "device", "default_dtype", "created", "host", "command", "seed", "tags"]
    cells = ["<div></div><div><b>A</b> " + _E(report.a.path) + "</div><div><b>B</b> " + _E(report.b.path) + "</div>"]
    for k in keys:
        cells.append(f"<div>{_E(k)}</div><div>{_meta_cell(ma, k)}</div><div>{_meta_cell(mb, k)}</div>")
    cells.append(
        f"<div>complete</div><div>{report.a.trace.complete}</div><div>{report.b.trace.complete}</div>"
    )
    return '<div class="meta">' + "".join(cells) + "</div>"


def _asset(name: str) -> str:
    return resources.files("padiff_trace.analyzer.reporting").joinpath("assets", name).read_text(encoding="utf-8")


def _safe_json(obj: Any) -> str:
    text = json.dumps(obj, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def table_rows(report: ReportData, limit: int = TABLE_ROWS) -> dict[str, tuple[np.ndarray, int]]:
    """Per table (pairs, weights, param_grads): the rows the page lists and how many there are.
    A table of at most ``limit`` rows is listed whole; a longer one lists the rows around the
    first divergence, failing rows (up to half the limit), then its first rows, in order."""
    t = report.pairs
    first = report.first_divergence.pair.index if report.first_divergence else None
    failed = t.failing if len(t) else np.zeros(0, bool)
    out = {}
    for key in PAIR_SECTIONS:
        roles = [r for r in t.roles if pair_section(r) == key]
        rows = np.flatnonzero(t.role_mask(*roles)) if len(t) else np.zeros(0, np.intp)
        if len(rows) <= limit:
            out[key] = (rows, len(rows))
            continue
        keep: set[int] = set()
        if first is not None:  # the rows around the first divergence
            at = int(np.searchsorted(rows, first))
            keep.update(rows[max(0, at - limit // 8) : at + limit // 8].tolist())
        keep.update(rows[failed[rows]][: limit // 2].tolist())  # failing rows, up to half the table
        for r in rows[: limit + len(keep)].tolist():  # then the first rows (enough of them: some are kept already)
            if len(keep) >= limit:
                break
            keep.add(r)
        out[key] = (np.array(sorted(keep), dtype=np.intp), len(rows))
    return out


def render_html(report: ReportData) -> str:
    """The self-contained report page as one string (``write_page``)."""
    buf = io.StringIO()
    write_page(report, buf)
    return buf.getvalue()


def write_page(report: ReportData, out: TextIO) -> None:
    """The self-contained report page: summaries, plots and the interesting pairs (all of them
    up to ``TABLE_ROWS`` per table; pairs.csv and report.json hold every pair)."""
    t = report.pairs
    listed = table_rows(report, TABLE_ROWS)
    rows = {key: [_row(p) for p in t.subset(idx)] for key, (idx, _) in listed.items()}
    first = report.first_divergence.pair.index if report.first_divergence else None
    payload = {"rows": rows, "columns": _columns(), "first_index": first}
    verdict = report.verdict.lower()
    failed = dict.fromkeys(PAIR_SECTIONS, 0)
    for role, (_, fails) in (t.role_counts() if len(t) else {}).items():
        failed[pair_section(role)] += fails
    amps = "".join(
        f"<li>x{x.ratio:.3g} {_E(x.call_pair.a.label)} [{_E(x.call_pair.a.module_type)}] ↔ {_E(x.call_pair.b.label)}: "
        f"in {x.in_rel_l2:.2e} → out {x.out_rel_l2:.2e}</li>"
        for x in report.amplifiers[:10]
    )
    shown_note = {key: _shown_note(len(idx), total) for key, (idx, total) in listed.items()}
    out.write(f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>padiff-trace report: {_E(verdict)}</title>
<style>{_asset("report.css")}</style></head><body>
<h1>padiff-trace report <span class="verdict {verdict}">{verdict.upper()}</span></h1>
<p>A <b>{_E(str(report.a.framework))}</b> {_E(report.a.path)} vs B <b>{_E(str(report.b.framework))}</b> {_E(report.b.path)}
(reference). {len(t)} pairs, {len(report.failed)} failing: activations/grads {failed['pairs']},
weights {failed['weights']}, parameter grads {failed['param_grads']}. Tolerance: {_E(report.tolerance_text())}.</p>
{_environment_html(report)}
{_findings_html([f for f in report.diagnosis if f.topic != "first_divergence" and f.code != "environment_difference"])}
<h2>Error along the model</h2>{_plots(report)}
<h2>First divergence</h2>{divergence_html(report)}
<h2>Top error amplifiers</h2><ol>{amps or "<li>none</li>"}</ol>
<h2>All pairs</h2>{shown_note["pairs"]}<div id="table-pairs"></div>
<h2>Weights</h2>{shown_note["weights"]}<div id="table-weights"></div>
<h2>Parameter gradients</h2>{shown_note["param_grads"]}<div id="table-grads"></div>
<h2>Traces</h2>{_meta_html(report)}
<script type="application/json" id="report-data">""")
    out.write(_safe_json(payload))
    out.write(f"""</script>
<script>{_asset("report.js")}</script>
</body></html>
""")


def _shown_note(listed: int, total: int) -> str:
    if listed == total:
        return ""
    return (f'<p class="muted">{listed} of {total} pairs listed: the failing ones, those around the first '
            'divergence and the first ones. <a href="pairs.csv">pairs.csv</a> and '
            '<a href="report.json">report.json</a> hold every pair.</p>')


def write_html(report: ReportData, path: str | os.PathLike[str]) -> Path:
    """Write the report page to ``path`` (replaced atomically)."""
    out = Path(path)
    write_atomic_streams(out.parent, {out.name: partial(write_page, report)})
    return out
