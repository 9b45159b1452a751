"""One self-contained HTML file for a comparison: plots, first divergence, tables.

Plots are made with plotly (the optional ``[html]`` extra) and plotly.js is inlined,
so the page opens offline. Every string taken from a trace is either HTML-escaped on
the Python side or inserted by the page's script with ``textContent``; the embedded
JSON escapes ``<``, ``>`` and ``&`` so no trace content can close the script block.
"""

from __future__ import annotations

import html
import importlib.util
import json
import logging
import math
import os
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from padiff_trace import TraceWriteError, UserError

if TYPE_CHECKING:
    from ._report import PairResult, Report

__all__ = ["write_default_html", "write_html"]

logger = logging.getLogger(__name__)

_E = html.escape


def _num(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _row(p: PairResult) -> dict[str, Any]:
    m = p.metrics
    return {
        "index": p.index,
        "step": p.step,
        "role": p.role,
        "verdict": "ok" if p.passed else "FAIL",
        "cls": getattr(p, "cls", None) or "",
        "a": p.a.name,
        "a_type": p.a.module_type,
        "b": p.b.name,
        "shape": "x".join(map(str, p.b.shape)),
        "max_abs": _num(m.max_abs) if m else None,
        "mean_abs": _num(m.mean_abs) if m else None,
        "rel_l2": _num(m.rel_l2) if m else None,
        "cosine": _num(m.cosine) if m else None,
        "reason": p.reason,
    }


def _figures(report: Report) -> list[dict[str, Any]]:
    import plotly.graph_objects as go
    import plotly.io as pio

    first = report.first_divergence.pair.index if report.first_divergence else None
    amp_labels = {x.call_pair.a.label for x in report.amplifiers[:5]}
    figs = []
    for div, role, title in (
        ("plot-forward", "output", "Forward: error of each module output, in execution order"),
        ("plot-backward", "grad_output", "Backward: error of each output gradient, in execution order"),
    ):
        ps = [p for p in report.pairs if p.role == role and p.metrics is not None]
        if not ps:
            continue
        x = list(range(len(ps)))
        names = [_E(f"{p.a.name} [{p.a.module_type}]") for p in ps]
        fig = go.Figure()
        for key, label in (("max_abs", "max |a-b|"), ("mean_abs", "mean |a-b|"), ("rel_l2", "relative L2")):
            y = [(_num(getattr(p.metrics, key)) or None) for p in ps]
            fig.add_trace(go.Scatter(x=x, y=y, mode="lines+markers", name=label, text=names, hovertemplate="%{text}<br>%{y:.3e}"))
        cos = [(_num(1.0 - float(p.metrics.cosine)) or None) for p in ps]
        fig.add_trace(go.Scatter(x=x, y=cos, mode="lines", name="1 - cosine", text=names, line={"dash": "dot"}, visible="legendonly"))
        fails = [(i, p) for i, p in enumerate(ps) if not p.passed]
        if fails:
            fig.add_trace(
                go.Scatter(
                    x=[i for i, _ in fails], y=[_num(p.metrics.mean_abs) for _, p in fails], mode="markers", name="failing",
                    marker={"color": "#c62828", "size": 7, "symbol": "x"}, text=[names[i] for i, _ in fails], hovertemplate="%{text}",
                )
            )
        for i, p in enumerate(ps):
            if p.index == first:
                fig.add_vline(x=i, line={"color": "#c62828", "width": 2}, annotation_text="first divergence")
        amps = [(i, p) for i, p in enumerate(ps) if p.call_pair is not None and p.call_pair.a.label in amp_labels]
        if amps:
            fig.add_trace(
                go.Scatter(
                    x=[i for i, _ in amps], y=[_num(p.metrics.rel_l2) for _, p in amps], mode="markers", name="top amplifiers",
                    marker={"color": "#ef6c00", "size": 11, "symbol": "diamond-open"}, text=[names[i] for i, _ in amps],
                    hovertemplate="%{text}",
                )
            )
        fig.update_layout(
            title=title, yaxis_type="log", xaxis_title="module call (execution order)", yaxis_title="error",
            height=380, margin={"l": 60, "r": 20, "t": 50, "b": 40}, legend={"orientation": "h", "y": -0.2},
        )
        figs.append({"div": div, "figure": json.loads(pio.to_json(fig))})
    return figs


def _stack_html(frames: Any) -> str:
    lines = [f"{f.file}:{f.line} in {f.function}\n    {f.source}" for f in frames] or ["(no user frames)"]
    return f'<div class="stack">{_E(chr(10).join(lines))}</div>'


def _divergence_html(report: Report) -> str:
    d = report.first_divergence
    if d is None:
        return "<p>No pair exceeds its tolerance.</p>"
    p = d.pair
    m = p.metrics
    metrics = "" if m is None else (
        f"max |a-b| {m.max_abs:.3e} at {list(m.argmax)}, mean {m.mean_abs:.3e}, rel-L2 {m.rel_l2:.3e}, cosine {m.cosine:.6f}"
    )
    inputs = "unknown" if d.input_rel_l2 is None else f"rel-L2 {d.input_rel_l2:.2e} ({'already failing' if d.inputs_failed else 'still matching'})"
    cls = getattr(p, "cls", None)
    return (
        f"<p>step {p.step}, {_E(p.role)}: {_E(p.reason)}<br>{_E(metrics)}<br>inputs of this call: {_E(inputs)}"
        + (f"<br>class: <b>{_E(str(cls))}</b>" if cls else "")
        + (f"<br><b>type difference: A {_E(td[0])} vs B {_E(td[1])}</b>" if (td := d.type_difference) else "")
        + "</p><div class='panel'>"
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


def write_html(report: Report, path: str | os.PathLike[str]) -> Path:
    """Write the self-contained report page; needs the ``[html]`` extra (plotly)."""
    try:
        import plotly.offline
    except ImportError:
        raise UserError("--html needs plotly: pip install 'padiff-trace[html]'") from None
    rows: dict[str, list[dict[str, Any]]] = {"pairs": [], "weights": [], "param_grads": []}
    for p in report.pairs:
        key = "weights" if p.role in ("param", "buffer") else "param_grads" if p.role == "param_grad" else "pairs"
        rows[key].append(_row(p))
    first = report.first_divergence.pair.index if report.first_divergence else None
    payload = {"rows": rows, "figures": _figures(report), "first_index": first}
    verdict = "diverged" if report.failed else "aligned"
    failed = {k: sum(r["verdict"] == "FAIL" for r in v) for k, v in rows.items()}
    amps = "".join(
        f"<li>x{x.ratio:.3g} {_E(x.call_pair.a.label)} [{_E(x.call_pair.a.module_type)}] ↔ {_E(x.call_pair.b.label)}: "
        f"in {x.in_rel_l2:.2e} → out {x.out_rel_l2:.2e}</li>"
        for x in report.amplifiers[:10]
    )
    body = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>padiff-trace report: {_E(verdict)}</title>
<style>{_asset("report.css")}</style></head><body>
<h1>padiff-trace report <span class="verdict {verdict}">{verdict.upper()}</span></h1>
<p>A <b>{_E(str(report.a.framework))}</b> {_E(report.a.path)} vs B <b>{_E(str(report.b.framework))}</b> {_E(report.b.path)}
(reference). {len(report.pairs)} pairs, {len(report.failed)} failing: activations/grads {failed['pairs']},
weights {failed['weights']}, parameter grads {failed['param_grads']}. Tolerance: {_E(report._tol_text())}.</p>
<h2>Error along the model</h2><div id="plot-forward"></div><div id="plot-backward"></div>
<h2>First divergence</h2>{_divergence_html(report)}
<h2>Top error amplifiers</h2><ol>{amps or "<li>none</li>"}</ol>
<h2>All pairs</h2><div id="table-pairs"></div>
<h2>Weights</h2><div id="table-weights"></div>
<h2>Parameter gradients</h2><div id="table-grads"></div>
<h2>Traces</h2>{_meta_html(report)}
<script>{plotly.offline.get_plotlyjs()}</script>
<script type="application/json" id="report-data">{_safe_json(payload)}</script>
<script>{_asset("report.js")}</script>
</body></html>
"""
    out = Path(path)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(body, encoding="utf-8")
    except OSError as exc:
        raise TraceWriteError(f"{out}: cannot write the HTML report: {exc.strerror or exc}") from exc
    return out


def write_default_html(report: Report, directory: str | os.PathLike[str]) -> Path | None:
    """``directory/report.html`` when plotly is installed; otherwise nothing (logged)."""
    if importlib.util.find_spec("plotly") is None:
        logger.info("plotly not installed: no report.html (pip install 'padiff-trace[html]')")
        return None
    return write_html(report, Path(directory) / "report.html")
