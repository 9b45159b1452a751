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
import json
import math
import os
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._atomic import write_atomic
from ._metric_table import shown
from ._svg import error_plot

if TYPE_CHECKING:
    from ._diagnosis import Finding
    from ._report import PairResult, Report

__all__ = ["render_html", "write_html"]

_E = html.escape
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


def _plots(report: Report) -> str:
    first = report.first_divergence.pair.index if report.first_divergence else None
    amps = {x.call_pair.a.id for x in report.amplifiers[:5]}
    figs = []
    for role, title in (
        ("output", "Forward: error of each module output, in execution order"),
        ("grad_output", "Backward: error of each output gradient, in execution order"),
    ):
        ps = [p for p in report.pairs if p.role == role and p.metrics is not None and not p.metrics.uncomparable]
        if ps:
            figs.append(error_plot(ps, title, first, amps))
    return "".join(f'<div class="figure">{f}</div>' for f in figs) or "<p>No module outputs or gradients compared.</p>"


def _findings_html(findings: list[Finding]) -> str:
    items = "".join(f'<li class="{"hint" if f.hint else "fact"}">{"→ " if f.hint else ""}{_E(f.text)}</li>' for f in findings)
    return f'<ul class="diagnosis">{items}</ul>' if items else ""


def _stack_html(frames: Any) -> str:
    lines = [f"{f.file}:{f.line} in {f.function}\n    {f.source}" for f in frames] or ["(no user frames)"]
    return f'<div class="stack">{_E(chr(10).join(lines))}</div>'


def _divergence_html(report: Report) -> str:
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


def _meta_html(report: Report) -> str:
    ma, mb = report.a.trace.meta, report.b.trace.meta
    keys = ["framework", "framework_version", "device", "default_dtype", "created", "host", "command", "seed", "tags"]
    cells = ["<div></div><div><b>A</b> " + _E(report.a.path) + "</div><div><b>B</b> " + _E(report.b.path) + "</div>"]
    for k in keys:
        cells.append(f"<div>{_E(k)}</div><div>{_E(str(ma.get(k, '')))}</div><div>{_E(str(mb.get(k, '')))}</div>")
    cells.append(
        f"<div>complete</div><div>{report.a.trace.complete}</div><div>{report.b.trace.complete}</div>"
    )
    return '<div class="meta">' + "".join(cells) + "</div>"


def _asset(name: str) -> str:
    return resources.files("padiff_trace.analyzer").joinpath("assets", name).read_text(encoding="utf-8")


def _safe_json(obj: Any) -> str:
    text = json.dumps(obj, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_html(report: Report) -> str:
    """The self-contained report page."""
    rows: dict[str, list[dict[str, Any]]] = {"pairs": [], "weights": [], "param_grads": []}
    for p in report.pairs:
        key = "weights" if p.role in ("param", "buffer") else "param_grads" if p.role == "param_grad" else "pairs"
        rows[key].append(_row(p))
    first = report.first_divergence.pair.index if report.first_divergence else None
    payload = {"rows": rows, "columns": _columns(), "first_index": first}
    verdict = report.verdict.lower()
    failed = {k: sum(r["verdict"] == "FAIL" for r in v) for k, v in rows.items()}
    amps = "".join(
        f"<li>x{x.ratio:.3g} {_E(x.call_pair.a.label)} [{_E(x.call_pair.a.module_type)}] ↔ {_E(x.call_pair.b.label)}: "
        f"in {x.in_rel_l2:.2e} → out {x.out_rel_l2:.2e}</li>"
        for x in report.amplifiers[:10]
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>padiff-trace report: {_E(verdict)}</title>
<style>{_asset("report.css")}</style></head><body>
<h1>padiff-trace report <span class="verdict {verdict}">{verdict.upper()}</span></h1>
<p>A <b>{_E(str(report.a.framework))}</b> {_E(report.a.path)} vs B <b>{_E(str(report.b.framework))}</b> {_E(report.b.path)}
(reference). {len(report.pairs)} pairs, {len(report.failed)} failing: activations/grads {failed['pairs']},
weights {failed['weights']}, parameter grads {failed['param_grads']}. Tolerance: {_E(report._tol_text())}.</p>
{_findings_html([f for f in report.diagnosis if f.topic != "first_divergence"])}
<h2>Error along the model</h2>{_plots(report)}
<h2>First divergence</h2>{_divergence_html(report)}
<h2>Top error amplifiers</h2><ol>{amps or "<li>none</li>"}</ol>
<h2>All pairs</h2><div id="table-pairs"></div>
<h2>Weights</h2><div id="table-weights"></div>
<h2>Parameter gradients</h2><div id="table-grads"></div>
<h2>Traces</h2>{_meta_html(report)}
<script type="application/json" id="report-data">{_safe_json(payload)}</script>
<script>{_asset("report.js")}</script>
</body></html>
"""


def write_html(report: Report, path: str | os.PathLike[str]) -> Path:
    """Write the report page to ``path`` (replaced atomically)."""
    out = Path(path)
    write_atomic(out.parent, {out.name: render_html(report)})
    return out
