"""Framework conventions checked on the recorded values (``padiff_trace.matching.CONVENTIONS``).

A failing weight or buffer pair whose tensor has a known convention is tested against that
convention's formula; when the formula holds on every element, the pair passes with the
convention named and what was measured. A formula that does not hold leaves the pair failing:
a convention never hides a difference it does not explain.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from padiff_trace import DamagedRecordError, Record
from padiff_trace.matching import CONVENTIONS, LOCAL_ALIASES, Convention, canonical_type, group_key

from ..alignment._calls import TraceView
from ..alignment._records import RecordLike
from ._pairtable import PairTable

__all__ = ["CHECKS", "apply_conventions", "running_var_prediction"]

logger = logging.getLogger(__name__)

_STATE = ("buffer", "param")


def _values_per_channel(v: TraceView, module: str, step: int) -> int | None:
    """n of the batch statistics a normalisation layer computed at ``step``: elements of its
    input per channel (axis 1)."""
    for c in v.calls.get(step, []):
        if c.module == module:
            ins = c.tensor_inputs()
            if ins and len(ins[0].shape) >= 2 and ins[0].shape[1]:
                return int(ins[0].numel // ins[0].shape[1])
    return None


def _previous(v: TraceView, rec: RecordLike) -> Record | None:
    steps = sorted(s for s in v.weights if s < rec.step)
    if not steps:
        return None
    return v.weights[steps[-1]].get((rec.module, rec.position))


def running_var_prediction(ra: RecordLike, rb: RecordLike, va: TraceView, vb: TraceView) -> tuple[np.ndarray, np.ndarray, str] | None:
    """B's running variance predicted from A's under the Bessel convention: new = (1 - m) old +
    m var_batch on both sides, one side with var_batch x n/(n-1). The momentum m is solved per
    channel from both sides' old and new values; its median must lie in (0, 1). Returns (B's
    predicted new values, B's recorded ones, what was measured), or None where the convention
    does not apply (other frameworks' sides, no previous step, no batch size)."""
    conv = _convention(ra)
    if conv is None or conv.check != "running_var_bessel":
        return None
    pa, pb = _previous(va, ra), _previous(vb, rb)
    if pa is None or pb is None or ra.step != rb.step:
        return None
    if not all(r.has_data for r in (ra, rb, pa, pb)):
        return None
    n = _values_per_channel(va, ra.module, pa.step) or _values_per_channel(vb, rb.module, pb.step)
    if n is None or n < 2:
        return None
    fa, fb = conv.sides.get(va.framework), conv.sides.get(vb.framework)
    if {fa, fb} != {"biased", "unbiased"}:
        return None
    a_new, b_new = ra.read().astype(np.float64).ravel(), rb.read().astype(np.float64).ravel()
    a_old, b_old = pa.read().astype(np.float64).ravel(), pb.read().astype(np.float64).ravel()
    if not (a_new.shape == b_new.shape == a_old.shape == b_old.shape):
        return None
    k = n / (n - 1) if fa == "biased" else (n - 1) / n  # B's batch variance as a multiple of A's
    den = b_old - k * a_old
    ok = np.abs(den) > 1e-6 * np.maximum(np.abs(b_old), 1e-30)
    if not ok.any():
        return None
    m = float(np.median((k * (a_new - a_old) - (b_new - b_old))[ok] / den[ok]))
    if not 0.0 < m < 1.0:
        return None
    pred = (1 - m) * b_old + k * (a_new - (1 - m) * a_old)
    biased, unbiased = ("A", "B") if fa == "biased" else ("B", "A")
    return pred, b_new, (f"{unbiased} = {biased}'s batch variance x {n}/{n - 1} at momentum {m:.3g} on every channel "
                         f"(n = {n} values per channel)")


def _running_var_bessel(conv: Convention, t: PairTable, i: int, va: TraceView, vb: TraceView) -> str | None:
    """The convention's prediction (``running_var_prediction``) reproduces B's new values from
    A's to fp32 rounding on every channel."""
    found = running_var_prediction(t.record(i, 0), t.record(i, 1), va, vb)
    if found is None:
        return None
    pred, b_new, detail = found
    scale = np.maximum(np.abs(b_new), 1e-12)
    return detail if float(np.max(np.abs(pred - b_new) / scale)) <= 1e-4 else None


# Convention.check -> test(convention, table, row, view A, view B) -> what was measured, or None
CHECKS: dict[str, Callable[[Convention, PairTable, int, TraceView, TraceView], str | None]] = {
    "running_var_bessel": _running_var_bessel,
}


def _convention(r: RecordLike) -> Convention | None:
    ctype = group_key(canonical_type(r.module_type))
    local = r.position
    for group, aliases in LOCAL_ALIASES.items():
        if group_key(group) == ctype:
            local = aliases.get(local, local)
    return CONVENTIONS.get((ctype, local))


def apply_conventions(t: PairTable, va: TraceView, vb: TraceView) -> list[dict[str, Any]]:
    """Failing weight/buffer pairs explained by a framework convention pass; one entry per
    convention found (with how many pairs it explained)."""
    if not len(t):
        return []
    rows = np.flatnonzero(t.role_mask(*_STATE) & ~t.passed)
    found: dict[str, dict[str, Any]] = {}
    for i in rows.tolist():
        ra = t.record(i, 0)
        conv = _convention(ra)
        if conv is None or conv.check not in CHECKS:
            continue
        try:
            detail = CHECKS[conv.check](conv, t, i, va, vb)
        except (DamagedRecordError, KeyError, ValueError, OSError):
            detail = None
        if detail is None:
            continue
        text = conv.text.format(detail=detail)
        t.set_verdict(i, True, f"convention: {text} ({t.reasons.get(i, '')})")
        entry = found.setdefault(conv.check, {"kind": "convention", "check": conv.check, "pairs": 0, "text": ""})
        entry["pairs"] += 1
        if not entry["text"]:
            entry["first"] = ra.name
            entry["text"] = f"{text} (first: {ra.name})"
    out = list(found.values())
    for e in out:
        e["text"] = f"{e['pairs']} pair(s): {e['text']}"
        logger.info("convention: %s", e["text"])
    return out
