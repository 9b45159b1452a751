"""Weights after an optimizer step: rounding carried through the update is not a divergence.

After step k, a weight is ``w_{k+1} = w_k - update(g_k)``. When the gradients ``g_k`` of both
sides agree to their own rounding (their pair passed), the updated weights differ by that
rounding passed through the optimizer, which a weight's tolerance (relative to the weight,
not to the update) may not admit: a bias whose update is a thousandth of its value fails
by 1e-8. Such a pair passes when the *update* of A agrees with the update of B as closely as
the gradients it came from agree (relative L2 within ``UPDATE_FACTOR`` times the gradients',
or 1e-6) — the optimizer may amplify rounding a little (Adam's division by sqrt(v)), never
turn a rounding difference into a bug. A wrong learning rate, momentum or weight decay makes
the updates differ by far more and the pair keeps failing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from padiff_trace import DamagedRecordError, Record

from ._calls import TraceView
from ._pairtable import PairTable

__all__ = ["UPDATE_FACTOR", "absorb_update_rounding"]

UPDATE_FACTOR = 10.0
_FLOOR = 1e-6


def _previous(v: TraceView, table: Any, rec: Record) -> tuple[int, Record] | None:
    steps = sorted(s for s in table if s < rec.step)
    if not steps:
        return None
    r = table[steps[-1]].get((rec.module, rec.position))
    return (steps[-1], r) if r is not None else None


def _arr(r: Record, perm: tuple[int, ...] | None) -> np.ndarray:
    a = np.asarray(r.read(), np.float64)
    return np.transpose(a, perm) if perm is not None else a


def _rel(x: np.ndarray, y: np.ndarray) -> float:
    ny = float(np.linalg.norm(y))
    return float(np.linalg.norm(x - y)) / ny if ny > 0 else (0.0 if not np.any(x) else float("inf"))


def absorb_update_rounding(t: PairTable, va: TraceView, vb: TraceView) -> int:
    """Failing parameter pairs after an update whose updates agree as well as their gradients
    do pass, with both numbers named. Returns how many passed."""
    if not len(t):
        return 0
    rows = np.flatnonzero(t.role_mask("param") & ~t.passed & t.measured & (t.col("step") > 0))
    if not len(rows):
        return 0
    grad_rows = np.flatnonzero(t.role_mask("param_grad"))
    grad_ok = {int(s): bool(p) for s, p in zip(t.col("seq_a")[grad_rows].tolist(), t.passed[grad_rows].tolist())}
    n = 0
    for i in rows.tolist():
        try:
            ra, rb = t.record(i, 0), t.record(i, 1)
            if not (isinstance(ra, Record) and isinstance(rb, Record) and ra.has_data and rb.has_data):
                continue
            pa, pb = _previous(va, va.weights, ra), _previous(vb, vb.weights, rb)
            if pa is None or pb is None or pa[0] != pb[0]:
                continue
            step = pa[0]
            ga = va.param_grads.get(step, {}).get((ra.module, ra.position))
            gb = vb.param_grads.get(step, {}).get((rb.module, rb.position))
            if ga is None or gb is None or not grad_ok.get(ga.seq, False) or not (ga.has_data and gb.has_data):
                continue
            perm = t.perms.get(i)
            rel_g = _rel(_arr(ga, perm), _arr(gb, None))
            ua = _arr(ra, perm) - _arr(pa[1], perm)
            ub = _arr(rb, None) - _arr(pb[1], None)
            if ua.shape != ub.shape:
                continue
            rel_u = _rel(ua, ub)
        except (DamagedRecordError, KeyError, ValueError, TypeError, OSError):
            continue
        if rel_u <= max(UPDATE_FACTOR * rel_g, _FLOOR):
            t.set_verdict(i, True, f"rounding through the update: the step-{step} updates agree to rel-L2 {rel_u:.2g}, "
                                   f"their gradients to {rel_g:.2g} ({t.reasons.get(i, '')})")
            n += 1
    return n
