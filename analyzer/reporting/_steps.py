"""The per-step view of a multi-step comparison: loss A vs B, global gradient norm, the
worst error of weights, gradients and outputs in each step, and the first step at which each
leaves its noise floor (has a failing pair).

Computed from the pair table and the records' stored statistics (no tensor is read), so a
1,000-step stats-only trace costs one small row per step.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from padiff_trace import DamagedRecordError

if TYPE_CHECKING:
    from ..alignment._calls import TraceView
    from ..judging._pairtable import PairTable

__all__ = ["SERIES", "step_rows", "first_off"]

# series name -> the pair roles it covers
SERIES: dict[str, tuple[str, ...]] = {
    "loss": ("loss",),
    "output": ("output", "probe", "op_output"),
    "grad": ("grad_output", "grad_input", "op_grad_output"),
    "param_grad": ("param_grad",),
    "weight": ("param", "buffer"),
}


def _stat(r: Any, name: str) -> float | None:
    try:
        v = float(r.stats[name])
    except (DamagedRecordError, KeyError, ValueError, TypeError, OSError):
        return None
    return v if math.isfinite(v) else None


def _loss(view: TraceView, step: int) -> float | None:
    recs = view.losses.get(step) or []
    return _stat(recs[0], "mean") if recs else None


def _grad_norm(view: TraceView, step: int) -> float | None:
    recs = view.param_grads.get(step)
    if not recs:
        return None
    total = 0.0
    for r in recs.values():
        v = _stat(r, "l2")
        if v is None:
            return None
        total += v * v
    return math.sqrt(total)


def step_rows(table: PairTable, va: TraceView, vb: TraceView) -> list[dict[str, Any]]:
    """One dict per step present in both traces: losses, gradient norms, and per series the
    worst relative L2 error and the number of failing pairs."""
    steps = sorted(set(va.steps) & set(vb.steps))
    if len(table):
        step_col = table.col("step")
        rel = table.metric("rel_l2")
        failed = table.failing
        masks = {name: table.role_mask(*roles) for name, roles in SERIES.items()}
    rows = []
    for s in steps:
        row: dict[str, Any] = {"step": s, "loss_a": _loss(va, s), "loss_b": _loss(vb, s),
                               "grad_norm_a": _grad_norm(va, s), "grad_norm_b": _grad_norm(vb, s)}
        for name in SERIES:
            if not len(table):
                row[f"{name}_rel_l2"], row[f"{name}_failed"] = None, 0
                continue
            sel = masks[name] & (step_col == s)
            vals = rel[sel]
            vals = vals[np.isfinite(vals)]
            row[f"{name}_rel_l2"] = float(vals.max()) if len(vals) else None
            row[f"{name}_failed"] = int((failed & sel).sum())
        rows.append(row)
    return rows


def first_off(rows: list[dict[str, Any]]) -> dict[str, int | None]:
    """Per series, the first step with a failing pair (off its noise floor), None if none."""
    return {name: next((r["step"] for r in rows if r[f"{name}_failed"]), None) for name in SERIES}


def steps_text(rows: list[dict[str, Any]], width: int = 12) -> str:
    """The terminal's per-step lines: where each series leaves the noise floor, and the steps
    around it (at most ``width`` rows)."""
    off = first_off(rows)
    said = ", ".join(f"{k.replace('_', ' ')} step {v}" for k, v in off.items() if v is not None) or "none"
    lines = [f"Per step ({len(rows)} steps): first off the noise floor: {said}"]
    first = min((v for v in off.values() if v is not None), default=None)
    pick = rows[:width] if first is None else [r for r in rows if first - 2 <= r["step"] <= first + width - 3]
    if not pick:
        pick = rows[:width]
    lines.append("  step     loss A        loss B        |grad| A     |grad| B     weights rel-L2  grads rel-L2")
    for r in pick:
        lines.append(
            f"  {r['step']:<6} {_n(r['loss_a']):>12}  {_n(r['loss_b']):>12}  {_n(r['grad_norm_a']):>11}  "
            f"{_n(r['grad_norm_b']):>11}  {_n(r['weight_rel_l2']):>14}  {_n(r['param_grad_rel_l2']):>12}"
            + ("  <- first off" if r["step"] == first else "")
        )
    if len(rows) > len(pick):
        lines.append(f"  ({len(rows) - len(pick)} more steps in report.json 'steps' and the HTML plot)")
    return "\n".join(lines)


def _n(v: float | None) -> str:
    return "-" if v is None else f"{v:.5g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.3e}"
